"""Turning a fetched page into the text a model reads.

trafilatura keeps an HTML page's main text and drops navigation, ads and
footers. It is CPU work (lxml parsing: milliseconds on a normal page,
minutes and hundreds of MB on a malformed one), so it never runs in the
run's process: extract_pool hands it to a worker process (extract_worker)
that is bounded in time and memory. Plain text and JSON are only decoded.
"""

from __future__ import annotations


def article_text(html: bytes, encoding: str | None, url: str) -> str | None:
    """The page's main text, or None when trafilatura finds none."""
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
