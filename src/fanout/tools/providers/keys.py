"""API keys for search providers: from the environment only, never a flag, never printed.

A key lives in a Secret so that repr() of a provider, a traceback's locals or
a debug log never shows it; only the request header builder unwraps it.
"""

from __future__ import annotations

import os

from fanout.errors import ConfigError


class Secret:
    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def key_from_env(variable: str, provider: str) -> Secret:
    """The key, or a ConfigError before the run starts that names the variable to set."""
    value = (os.environ.get(variable) or "").strip()
    if not value:
        raise ConfigError(
            f"search provider {provider} needs an API key: export {variable}=... "
            f"or leave {provider} out of --search-providers"
        )
    return Secret(value)
