"""One extraction worker: a child process that turns page bytes into text, within a memory limit.

extract_pool starts it as `python -m fanout.tools.extract_worker MEMORY_BYTES`
and kills it when a page takes too long; the memory limit (RLIMIT_AS, the
whole address space) is the worker's own, set once its libraries are loaded,
so a page that needs more fails with MemoryError here instead of growing the
run's process. The worker ignores SIGINT: the run decides when it stops, and
it exits by itself when its stdin closes (the run ended, or was killed).

The exchange on stdin/stdout, binary, one job at a time:
    worker -> run, once:    b"ready\\n"
    run -> worker, per job: a JSON header line {"kind", "url", "encoding", "size", "max_pages"}, then `size` bytes
    worker -> run, per job: a JSON header line {"status", "size", "detail", "pages_read", "pages"},
                            then `size` bytes of UTF-8 text
`status` is ok (size 0: no text found), unreadable (a PDF PDFium cannot
open), too_large (the job ran into the memory limit; the worker exits after
replying, and a worker whose peak came that near is not reused) or failed.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from typing import Any, BinaryIO

from fanout.tools.extract import article_text
from fanout.tools.pdf import UnreadablePdf, pdf_text

READY = b"ready\n"
NEAR_LIMIT = 0.9
"""A job whose peak address space reached this share of the limit counts as too large (see _ran_into)."""


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(1), "wb")  # the exchange keeps the real stdout...
    os.dup2(2, 1)  # ...and whatever a library prints goes to stderr instead
    _load_libraries()
    limit = int(argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _send(replies, READY)
    jobs = sys.stdin.buffer
    for line in iter(jobs.readline, b""):
        job = json.loads(line)
        reply, text = _run(job, jobs.read(job["size"]))
        if _ran_into(limit):
            reply, text = {**reply, "status": "too_large"}, b""
        _send(replies, json.dumps({**reply, "size": len(text)}).encode() + b"\n" + text)
        if reply["status"] == "too_large":
            return 0  # a heap that hit the limit is not worth keeping
    return 0


def _load_libraries() -> None:
    """Loaded before the memory limit, so the limit is all left for pages; one small page
    warms trafilatura's lazy set-up, which would otherwise count against the first page's time. An
    install without pypdfium2 still reads HTML; a PDF then fails with the ImportError as its reason."""
    try:
        import pypdfium2  # noqa: F401
    except ImportError:
        pass
    article_text(b"<html><body><article><p>Warm-up text for the extractor.</p></article></body></html>", "utf-8", "")


def _run(job: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
    reply: dict[str, Any] = {"status": "ok", "detail": "", "pages_read": None, "pages": None}
    try:
        if job["kind"] == "pdf":
            found = pdf_text(body, max_pages=job["max_pages"])
            reply.update(pages_read=found.pages_read, pages=found.pages)
            return reply, found.text.encode("utf-8", "replace")
        return reply, (article_text(body, job["encoding"], job["url"]) or "").encode("utf-8", "replace")
    except MemoryError:
        return {**reply, "status": "too_large"}, b""
    except UnreadablePdf as exc:
        return {**reply, "status": "unreadable", "detail": str(exc)}, b""
    except Exception as exc:  # noqa: BLE001 -- the run reads every failure as a tool error
        return {**reply, "status": "failed", "detail": f"{type(exc).__name__}: {exc}"}, b""


def _ran_into(limit: int) -> bool:
    """Whether the address space came near the limit: lxml reports a failed allocation as an
    "unknown error" and trafilatura then answers "no text", so the MemoryError never reaches us."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            peak = next((line for line in status if line.startswith("VmPeak:")), "")
    except OSError:
        return False  # no /proc: only a MemoryError that reaches _run tells
    fields = peak.split()
    return len(fields) >= 2 and int(fields[1]) * 1024 >= NEAR_LIMIT * limit


def _send(replies: BinaryIO, data: bytes) -> None:
    replies.write(data)
    replies.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
