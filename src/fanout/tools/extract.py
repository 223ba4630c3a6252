"""Turning fetched HTML into the article text a model reads.

trafilatura keeps the main text and drops navigation, ads and footers. It
is CPU work (lxml parsing, up to seconds on a big page), so it runs in a
worker thread: on the event loop it would stall every other verdict.
"""

from __future__ import annotations

import anyio


async def extract_article(html: bytes, *, encoding: str | None, url: str) -> str | None:
    """The page's main text, or None when trafilatura finds none."""
    return await anyio.to_thread.run_sync(_extract, html, encoding, url)


def _extract(html: bytes, encoding: str | None, url: str) -> str | None:
    import trafilatura  # heavy import, paid only when a page is actually read

    text = trafilatura.extract(
        _decoded(html, encoding), url=url, favor_recall=True, include_comments=False, include_tables=True
    )
    stripped = (text or "").strip()
    return stripped or None


def _decoded(html: bytes, encoding: str | None) -> str | bytes:
    """The declared charset wins; without one, trafilatura guesses from the bytes."""
    if encoding:
        try:
            return html.decode(encoding, errors="replace")
        except LookupError:
            pass
    return html


def decode_plain_text(body: bytes, encoding: str | None) -> str:
    try:
        return body.decode(encoding or "utf-8", errors="replace").strip()
    except LookupError:
        return body.decode("utf-8", errors="replace").strip()


def truncate(text: str, max_chars: int) -> str:
    """Cut long pages so one fetch cannot flood the model's context; say so plainly."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n\n[truncated: showing the first {max_chars:,} of {len(text):,} characters]"
