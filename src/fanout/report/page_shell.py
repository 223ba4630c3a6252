"""What every page of the HTML report shares: the shell, its Content-Security-Policy, the style, small parts.

Model output (rationales, URLs, transcripts) is untrusted: everything is
escaped, links are made only for http(s) URLs, and the Content-Security-Policy
forbids every outside fetch and every script but the page's own, named by its
sha256. So even a slip in escaping could not load anything or run code when a
page is opened, and the report stays one folder that works offline.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from urllib.parse import urlsplit

from fanout.report.change import Change
from fanout.report.charts import esc
from fanout.judging.scales import STANCE_OF_TRUTH
from fanout.base.records import VerdictRecord

POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
"""Nothing loads from anywhere; no script runs unless `csp` names it."""

CSS = """
:root { --ink:#1f2328; --muted:#59636e; --line:#d0d7de; --soft:#f6f8fa; --accent:#0969da; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif; color:var(--ink); background:#fff; }
header { background:linear-gradient(135deg,#0b3d91,#0969da); color:#fff; padding:20px 32px 16px; }
header h1 { margin:0 0 4px; font-size:24px; }
header a { color:#fff; }
header .sub { margin:0; opacity:.85; font-size:13px; overflow-wrap:anywhere; }
header .notes { margin:12px 0 0; padding:0; list-style:none; font-size:13px; }
header .notes li { background:rgba(255,255,255,.14); border-left:3px solid #ffd33d; padding:3px 10px; margin-top:4px; }
.cards { display:flex; flex-wrap:wrap; gap:10px; margin-top:14px; }
.card { background:rgba(255,255,255,.14); border-radius:8px; padding:7px 12px; min-width:110px; max-width:260px; }
.card b { display:block; font-size:19px; white-space:nowrap; }
.card span { display:block; font-size:12px; opacity:.9; }
.card span.who { font-weight:600; opacity:1; overflow-wrap:anywhere; }
nav { position:sticky; top:0; z-index:2; background:#fff; border-bottom:1px solid var(--line); padding:8px 32px; }
nav a { margin-right:16px; color:var(--accent); text-decoration:none; font-weight:500; }
main { padding:8px 32px 40px; max-width:1500px; }
section { margin-top:28px; }
h2 { font-size:19px; border-bottom:1px solid var(--line); padding-bottom:4px; }
h3 { font-size:15px; margin:18px 0 6px; }
.charts { display:flex; flex-wrap:wrap; gap:28px; align-items:flex-start; }
.chart { background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px; max-width:100%; overflow-x:auto; }
.stat { color:var(--muted); max-width:80em; }
p.note { color:#7d4e00; background:#fff8c5; border-left:3px solid #d4a72c; padding:4px 10px; max-width:80em; }
table { border-collapse:collapse; margin:8px 0; font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:5px 8px; text-align:right; vertical-align:top; }
th { background:var(--soft); font-weight:600; }
.scroll { overflow-x:auto; }
.scroll td.l:first-child { white-space:nowrap; }
td.l, th.l { text-align:left; }
#health th { font-size:12px; }
tr.human td { background:#fff8c5; }
table.edits { width:100%; }
table.edits td, table.edits th { text-align:left; }
table.edits td.edit { min-width:260px; max-width:420px; overflow-wrap:anywhere; }
.old { color:#82071e; background:#ffebe9; padding:0 3px; border-radius:3px; }
.new { color:#116329; background:#dafbe1; padding:0 3px; border-radius:3px; }
.v { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; white-space:nowrap;
     text-decoration:none; color:var(--ink); }
.v-verified-high { background:#116329; color:#fff; } .v-verified-low { background:#2da44e; color:#fff; }
.v-plausible { background:#8fd6a1; } .v-unverifiable { background:#d0d7de; }
.v-suspect { background:#f0883e; color:#fff; } .v-incorrect { background:#cf222e; color:#fff; }
.v-none { background:#fff; border:1px dashed #8c959f; color:var(--muted); }
.v.aside { text-decoration:line-through; opacity:.75; }
.s-accept, .s-reject, .s-unsure { font-weight:600; white-space:nowrap; }
.s-accept { color:#1a7f37; } .s-reject { color:#cf222e; } .s-unsure { color:#59636e; }
.badge { display:inline-block; background:#fff8c5; border:1px solid #d4a72c; border-radius:10px; padding:0 6px; font-size:11px; }
.warn { color:#9a6700; font-weight:600; }
.nowrap { white-space:nowrap; }
.tools { display:flex; flex-wrap:wrap; gap:14px; align-items:center; margin:8px 0; }
.tools[hidden] { display:none; }
.tools select, .tools input { font:inherit; padding:3px 6px; }
details summary { cursor:pointer; }
pre { white-space:pre-wrap; overflow-wrap:anywhere; margin:2px 0 6px; font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace; }
main p, main li, main dd, main code, .msg { overflow-wrap:anywhere; }
.model { border:1px solid var(--line); border-radius:8px; padding:4px 18px 12px; margin-top:22px; max-width:1100px; }
.msg { border-left:3px solid var(--line); padding-left:10px; margin:8px 0; }
.msg.role-assistant { border-color:#0969da; } .msg.role-tool { border-color:#8c959f; } .msg.role-user { border-color:#2da44e; }
ul.sources, ol.calls { padding-left:20px; margin:4px 0 8px; }
ol.calls li { margin-bottom:4px; }
.muted { color:var(--muted); }
dl.edit { display:grid; grid-template-columns:max-content 1fr; gap:4px 16px; max-width:1100px; }
dl.edit dt { color:var(--muted); } dl.edit dd { margin:0; overflow-wrap:anywhere; }
footer { padding:16px 32px 32px; color:var(--muted); font-size:12px; }
header .simulated { display:inline-block; margin:10px 0 0; padding:3px 10px; background:#ffd33d; color:#1f2328;
                    border-radius:6px; font-weight:600; font-size:13px; }
header .first { margin-top:12px; max-width:100%; }
header .first .queue-count { margin:0 0 4px; font-weight:600; }
header .first table { background:#fff; color:var(--ink); border-radius:6px; margin:0; }
header .first td, header .first th { white-space:nowrap; }
header .first a { color:#fff; }
@media (max-width: 600px) {
  header, nav, main, footer { padding-left:12px; padding-right:12px; }
  header h1 { font-size:20px; }
  .cards { gap:6px; } .card { min-width:0; padding:5px 9px; } .card b { font-size:16px; }
  nav a { margin-right:10px; }
}
"""


def script_hash(script: str) -> str:
    """The CSP source that allows exactly this inline script: 'sha256-<base64 of its digest>'."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def csp(scripts: Sequence[str] = ()) -> str:
    """The page's policy: POLICY, plus a script-src naming each of its inline scripts by hash."""
    if not scripts:
        return POLICY
    return POLICY + "; script-src " + " ".join(script_hash(s) for s in scripts)


def page(title: str, body: str, scripts: Sequence[str] = ()) -> str:
    """A whole HTML document; each script goes at the end of the body, so it runs on the parsed page."""
    inline = "".join(f"<script>{s}</script>" for s in scripts)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp(scripts)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{body}{inline}</body></html>\n"
    )


def link(url: str, text: str | None = None) -> str:
    """An outside link for an http(s) URL; anything else (javascript:, data:) stays text."""
    shown = esc(url if text is None else text)
    if urlsplit(url.strip()).scheme.lower() in ("http", "https"):
        return f'<a href="{esc(url.strip())}" rel="noopener noreferrer nofollow">{shown}</a>'
    return shown


def is_entity_id(text: str) -> bool:
    return len(text) > 1 and text[0] in "QPL" and text[1:].isdigit()


def entity_link(qid: str) -> str:
    if is_entity_id(qid):
        return f'<a href="https://www.wikidata.org/wiki/{esc(qid)}" rel="noopener noreferrer">{esc(qid)}</a>'
    return esc(qid)


def stance_html(value: str | None) -> str:
    if value is None:
        return '<span class="muted nowrap">tie / none</span>'
    return f'<span class="s-{esc(value)}">{esc(value)}</span>'


def model_anchor(index: int) -> str:
    """The id of a model's section on an edit page (model names may hold any character; indexes do not)."""
    return f"model-{index + 1}"


def change_html(change: Change, diff_type: str | None) -> str:
    """`old → new` as a patroller reads a diff: removed in red, added in green.

    A qualifier, reference or rank edit leaves the statement's value as it was:
    that value is shown plain, and the part that changed in colour.
    """
    if change.detail is not None:
        return _detail_html(change, diff_type)
    old = f'<span class="old">{esc(change.old)}</span>' if change.old is not None else ""
    new = f'<span class="new">{esc(change.new)}</span>' if change.new is not None else ""
    if old and new:
        return f"{old} → {new}"
    if old:
        return f"{old} removed" if diff_type == "value_removed" else old
    return new or '<span class="muted">–</span>'


def _detail_html(change: Change, diff_type: str | None) -> str:
    """A qualifier, reference or rank edit: the statement's value plain, the part that changed in colour."""
    statement = esc(change.new) + " " if change.new is not None else ""
    colour = "old" if (diff_type or "").endswith("_removed") else "new"
    return f'{statement}<span class="{colour}">{esc(change.detail)}</span>'


def verdict_badge(record: VerdictRecord, href: str | None = None, title: str | None = None,
                  set_aside: str | None = None) -> str:
    """The verdict, or the status of a record without one (timeout, invalid_json, ...), coloured by verdict;
    a link to `href` (the model's section of the edit page) when given, with `title` shown on hover. A verdict
    that casts no committee vote is struck through and says so, with the rule (`set_aside`)."""
    label = record.verdict or record.status
    tip = "" if title is None else f' title="{esc(title)}"'
    cls = f'v v-{esc(record.verdict or "none")}' + (" aside" if set_aside else "")
    badge = (f'<a class="{cls}" href="{esc(href)}"{tip}>{esc(label)}</a>' if href is not None
             else f'<span class="{cls}"{tip}>{esc(label)}</span>')
    if record.status != "ok" and record.verdict is not None:
        badge += f' <span class="warn">{esc(record.status)}</span>'
    if set_aside:
        badge += f' <span class="warn set-aside">set aside: {esc(set_aside)}</span>'
    return badge


def truth_html(truth: str | None) -> str:
    """A labelled truth, coloured by the stance it calls right; `–` for an edit without a label."""
    if truth is None:
        return '<span class="muted">–</span>'
    return f'<span class="s-{esc(STANCE_OF_TRUTH[truth])}">{esc(truth)}</span>'


def notes_html(notes: Sequence[str]) -> str:
    """Notes that qualify the figures just above them."""
    return "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
