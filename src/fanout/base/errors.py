"""The errors fanout raises, one base per kind of failure.

    FanoutError
    ├── ConfigError          bad input or set-up, found before any work starts:
    │                        printed as one line, non-zero exit, no traceback
    ├── RetryableError       a remote service failed; carries `retryable` and
    │   │                    `retry_after` so the one retry policy (fanout.base.retry)
    │   │                    can decide
    │   ├── ProviderError    an LLM endpoint failed
    │   │   └── ModelRefused the endpoint refuses the model itself (no such
    │   │                    model): every pair of it would fail alike, so the
    │   │                    run stops scheduling it and records none of them
    │   ├── WikidataError    the Wikidata API or Special:EntityData said no
    │   │                    (fanout.wikidata.errors)
    │   └── SearchFailure    a search backend failed; never leaves its provider,
    │                        it becomes an error result (fanout.tools.providers.base)
    ├── ToolFailure          a web tool could not do its job; never escapes to
    │                        the verdict: it becomes text handed back to the model
    └── DiskFull             a run file could not be written for want of space:
                             the run stops as on Ctrl-C, and the same command resumes

Foreign exceptions (httpx, aiohttp) are translated into these once, at the
boundary where they are caught, with `raise ... from exc`.
"""

from __future__ import annotations


class FanoutError(Exception):
    """Base of every error fanout raises on purpose."""


class ConfigError(FanoutError):
    """Bad input or set-up: the message names the problem and the fix."""


class RetryableError(FanoutError):
    """A remote service failed, perhaps only for now.

    `retryable` says whether waiting and asking again can help;
    `retry_after` is the server's own hint in seconds, if it gave one.
    """

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class ProviderError(RetryableError):
    """An LLM endpoint failed after (or instead of) answering.

    `status` is the HTTP status or the code an error-in-a-200-body carried;
    `refused` says the endpoint will never take this request as it stands
    (fanout.base.retry.is_refusal), so its pair is recorded `refused`, not `error`.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        refused: bool = False,
    ) -> None:
        super().__init__(message, retryable=retryable, retry_after=retry_after)
        self.status = status
        self.refused = refused


class ModelRefused(ProviderError):
    """The endpoint says the model does not exist for it (HTTP 400 "not a valid model ID", 404 no such model).

    Not a result of the pair: a corrected model name runs the same pairs.
    """


class ToolFailure(FanoutError):
    """A tool could not do its job; str(exc) is what the model is told."""


class DiskFull(FanoutError):
    """ENOSPC (or a full quota) while writing a run file; nothing half-written is left behind.

    `path` is the file that did not fit: the message names it, and how to go on.
    """

    def __init__(self, path: object) -> None:
        super().__init__(f"disk full at {path}; free space and run the same command")
        self.path = path
