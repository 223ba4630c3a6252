"""API keys for search providers: from the environment only, never a flag, never printed.

A key lives in a Secret so that repr() of a provider, a traceback's locals or
a debug log never shows it; only the request header builder unwraps it.
"""

from __future__ import annotations

import os

from fanout.errors import ConfigError
from fanout.secret import Secret


def key_from_env(variable: str, provider: str) -> Secret:
    """The key, or a ConfigError before the run starts that names the variable to set."""
    value = (os.environ.get(variable) or "").strip()
    if not value:
        raise ConfigError(
            f"search provider {provider} needs an API key: export {variable}=... "
            f"or leave {provider} out of --search-providers"
        )
    return Secret(value)
