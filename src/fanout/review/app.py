"""The desk as an aiohttp application: one page, its two static files, a transcript page per edit, a JSON API.

    GET  /                      the desk (Jinja2, autoescaped); the page carries its token
    GET  /static/desk.js        its script; /static/desk.css its style (nothing else is served from disk)
    GET  /edits/{rcid}          an edit's page of the report: every model's transcript, linked back to the edit
    GET  /api/edits?page=T      the list (working order, counts, progress toward a certificate, each model's
                                agreement with the people), polled by the page
    GET  /api/edits/{rcid}?page=T   one edit in full, with its decision history; the page has now shown it
    POST /api/decisions         {"rcid", "decision", "note", "page"}: appended to reviews.jsonl, fsynced, answered
    POST /api/undo              {"rcid", "page", "undoes"}: an undo line for the decision made at `undoes`

A decision or an undo is taken only for an edit the page showed in full
(409 otherwise): the desk decides only what a person saw. Every error is a
4xx (or a 500 when the run's files fail) with a one-line JSON body
{"error": reason}. The guard (fanout.review.guard) refuses foreign Host and
Origin before a handler runs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import anyio
import jinja2
from aiohttp import web

from fanout.base.errors import FanoutError
from fanout.base.reading import parse_json
from fanout.report import render_edit_page
from fanout.review.desk import Desk, Shown, desk_state, edit_detail
from fanout.review.guard import EDIT_PAGE_POLICY, HOST_KEY, OwnAddress, refusal, same_origin_only
from fanout.store.reviews import DECISIONS, NOTE_CAP, UNDO, Review, append_review, reviews_path

BODY_CAP = 16 * 1024
"""Bytes of a POST body: a note of NOTE_CAP characters, each escaped to six bytes, fits."""
STATIC = {"desk.js": "application/javascript", "desk.css": "text/css"}
"""The only files served from disk, by name: no path from a request ever reaches the file system."""
DESK_KEY = web.AppKey("desk", Desk)
REVIEWER_KEY = web.AppKey("reviewer", str)
DECISION_FIELDS = {"rcid", "decision", "note", "page"}
UNDO_FIELDS = {"rcid", "page", "undoes"}
DECISION_SHAPE = '{"rcid": N, "decision": "accept|reject|unsure", "note": "...", "page": "the page\'s token"}'

_templates = jinja2.Environment(
    loader=jinja2.PackageLoader("fanout.review", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def desk_app(desk: Desk, reviewer: str, address: OwnAddress) -> web.Application:
    """The application; `address.host` (`127.0.0.1:PORT`, set once it listens) is the only Host it answers."""
    app = web.Application(middlewares=[same_origin_only], client_max_size=BODY_CAP)
    app[DESK_KEY], app[REVIEWER_KEY], app[HOST_KEY] = desk, reviewer, address
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/edits/{rcid}", transcript)
    app.router.add_get("/api/edits", list_edits)
    app.router.add_get("/api/edits/{rcid}", one_edit)
    app.router.add_post("/api/decisions", decide)
    app.router.add_post("/api/undo", undo)
    return app


async def page(request: web.Request) -> web.Response:
    desk = request.app[DESK_KEY]
    report = await desk.report()
    text = _templates.get_template("desk.html").render(
        run=str(desk.run_dir), reviewer=request.app[REVIEWER_KEY], token=desk.pages.new(),
        simulated=report.run.simulated(), random_share=round(desk.settings.random_share * 100),
    )
    return web.Response(text=text, content_type="text/html")


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in STATIC:
        return refusal(404, f"no static file {name!r}")
    body = resources.files("fanout.review").joinpath("static", name).read_bytes()
    return web.Response(body=body, content_type=STATIC[name], headers={"Cache-Control": "no-cache"})


async def transcript(request: web.Request) -> web.Response:
    rcid = _rcid(request.match_info["rcid"])
    html = render_edit_page(await request.app[DESK_KEY].report(), rcid, "/", back="the desk")
    if html is None:
        return refusal(404, f"unknown rcid {request.match_info['rcid']}")
    return web.Response(text=html, content_type="text/html", headers={"Content-Security-Policy": EDIT_PAGE_POLICY})


async def list_edits(request: web.Request) -> web.Response:
    desk = request.app[DESK_KEY]
    state = desk_state(await desk.report(), desk.reviews(), desk.settings)
    shown = desk.pages.get(request.query.get("page"))
    if shown is not None:  # what this page is offered, and how each was drawn: a decision records it
        shown.drawn = {row["rcid"]: row["drawn"] for row in state["edits"] if row["drawn"]}
    return web.json_response(state, dumps=_dumps)


async def one_edit(request: web.Request) -> web.Response:
    desk = request.app[DESK_KEY]
    rcid = _rcid(request.match_info["rcid"])
    detail = edit_detail(await desk.report(), desk.reviews(), rcid)
    if detail is None:
        return refusal(404, f"unknown rcid {request.match_info['rcid']}")
    shown = desk.pages.get(request.query.get("page"))
    if shown is not None:
        shown.seen.add(rcid)
    return web.json_response(detail, dumps=_dumps)


async def decide(request: web.Request) -> web.Response:
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    problem = _decision_problem(body)
    if problem:
        return refusal(400, problem)
    desk = request.app[DESK_KEY]
    shown = await _shown(desk, body)
    if isinstance(shown, web.Response):
        return shown
    rcid = body["rcid"]
    drawn = shown.drawn.get(rcid, "chosen") if rcid not in desk.reviews().latest else "chosen"
    review = Review(rcid, body["decision"], body.get("note", ""), request.app[REVIEWER_KEY], _now(), drawn=drawn)
    return await _append(desk, review)


async def undo(request: web.Request) -> web.Response:
    """Take back the decision on an edit made at `undoes`, if it still stands: one more line, history kept."""
    body = await _body(request)
    if isinstance(body, web.Response):
        return body
    problem = _undo_problem(body)
    if problem:
        return refusal(400, problem)
    desk = request.app[DESK_KEY]
    shown = await _shown(desk, body)
    if isinstance(shown, web.Response):
        return shown
    standing = desk.reviews().latest.get(body["rcid"])
    if standing is None or standing.time != body["undoes"]:
        return refusal(409, f"the decision on {body['rcid']} made at {body['undoes']} no longer stands (decided again "
                            "since, or undone): reload to see what stands")
    return await _append(desk, Review(body["rcid"], UNDO, "", request.app[REVIEWER_KEY], _now(), undoes=body["undoes"]))


def _now() -> str:
    """UTC to the millisecond: an undo names the decision it takes back by its time, and two decisions on one edit
    can come within a second."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def _body(request: web.Request) -> Any:
    """The request's JSON, or the refusal to answer with."""
    if request.content_type != "application/json":
        return refusal(415, "send the decision as JSON (Content-Type: application/json)")
    if request.content_length is not None and request.content_length > BODY_CAP:
        return refusal(413, f"body over {BODY_CAP} bytes")
    raw = await request.content.read(BODY_CAP + 1)
    if len(raw) > BODY_CAP:
        return refusal(413, f"body over {BODY_CAP} bytes")
    try:
        return parse_json(raw)  # depth-capped: 16 KB of `[` is a RecursionError to json.loads, a 500
    except (UnicodeDecodeError, ValueError):
        return refusal(400, f"malformed JSON; send {DECISION_SHAPE}")


async def _shown(desk: Desk, body: dict[str, Any]) -> Shown | web.Response:
    """The page that names the edit, if it showed it; else the refusal (an unknown edit, an unknown page, an edit
    the page never drew on screen)."""
    report = await desk.report()
    rcid = body["rcid"]
    if rcid not in {e.rcid for e in report.run.edits}:
        return refusal(404, f"unknown rcid {rcid}: not an edit of this run")
    shown = desk.pages.get(body["page"])
    if shown is None:
        return refusal(409, "this page of the desk is unknown to it (the desk was restarted, or the page is too old): "
                            "reload it")
    if rcid not in shown.seen:
        return refusal(409, f"edit {rcid} was not shown on this page: a decision names the edit on screen")
    return shown


async def _append(desk: Desk, review: Review) -> web.Response:
    try:  # written and fsynced before the answer
        await anyio.to_thread.run_sync(append_review, desk.run_dir, review)
    except (OSError, FanoutError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        return refusal(500, f"cannot append to {reviews_path(desk.run_dir)}: {reason}")
    return web.json_response(review.line(), status=201, dumps=_dumps)


def _decision_problem(body: Any) -> str | None:
    """What is wrong with a decision's JSON, in one line; None when nothing is."""
    problem = _fields(body, DECISION_FIELDS, "a decision has rcid, decision, note and page")
    if problem:
        return problem
    if body.get("decision") not in DECISIONS:
        return f"decision must be one of {', '.join(DECISIONS)}, got {body.get('decision')!r}"
    note = body.get("note", "")
    if not isinstance(note, str):
        return "note must be a string"
    if len(note) > NOTE_CAP:
        return f"note is {len(note)} characters; at most {NOTE_CAP}"
    return _unicode(note)


def _undo_problem(body: Any) -> str | None:
    problem = _fields(body, UNDO_FIELDS, "an undo has rcid, page and undoes (the time of the decision)")
    if problem:
        return problem
    return None if isinstance(body.get("undoes"), str) else "undoes must be the time of the decision to take back"


def _fields(body: Any, allowed: set[str], shape: str) -> str | None:
    if not isinstance(body, dict):
        return f"expected a JSON object: {DECISION_SHAPE}"
    unknown = sorted(set(body) - allowed)
    if unknown:
        return f"unknown field(s) {', '.join(unknown)}; {shape}"
    rcid = body.get("rcid")
    if not isinstance(rcid, int) or isinstance(rcid, bool):
        return f"rcid must be an integer, got {rcid!r}"
    if not isinstance(body.get("page"), str):
        return "page is missing: a decision names the page that showed the edit (the desk's page sends its token)"
    return None


def _unicode(note: str) -> str | None:
    """A note must be text UTF-8 can hold: JSON's "\\ud800" is a lone surrogate, which no file can."""
    try:
        note.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"note is not valid Unicode: a lone surrogate (U+{ord(note[exc.start]):04X}) at character "
                f"{exc.start}; send text")
    return None


def _rcid(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise web.HTTPBadRequest(reason=f"rcid must be an integer, got {text!r}") from None


def _dumps(data: Any) -> str:
    """ASCII JSON: text from the run (a model's rationale, a page's title) may hold a lone surrogate, which
    escaped is still valid JSON, where raw it would fail to encode and the answer would be a 500."""
    return json.dumps(data, ensure_ascii=True, allow_nan=False)
