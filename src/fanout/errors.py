"""The errors fanout raises, one base per kind of failure.

    FanoutError
    ├── ConfigError      bad input or set-up, found before any work starts:
    │                    printed as one line, non-zero exit, no traceback
    ├── ProviderError    an LLM endpoint failed; carries `retryable` and
    │                    `retry_after` so the one retry policy can decide
    └── ToolFailure      a web tool could not do its job; never escapes to
                         the verdict: it becomes text handed back to the model

Foreign exceptions (httpx, openai) are translated into these once, at the
boundary where they are caught, with `raise ... from exc`.
"""

from __future__ import annotations


class FanoutError(Exception):
    """Base of every error fanout raises on purpose."""


class ConfigError(FanoutError):
    """Bad input or set-up: the message names the problem and the fix."""


class ProviderError(FanoutError):
    """An LLM endpoint failed after (or instead of) answering.

    `status` is the HTTP status or the code an error-in-a-200-body carried;
    `retryable` says whether waiting and asking again can help;
    `retry_after` is the server's own hint in seconds, if it gave one.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class ToolFailure(FanoutError):
    """A tool could not do its job; str(exc) is what the model is told."""
