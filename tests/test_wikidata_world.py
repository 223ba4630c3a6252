"""A stand-in for Wikidata, served through respx from tests/fixtures/wikidata.

The other test_wikidata_* modules import FakeWikidata from here. It answers
the way the real api.php and Special:EntityData do (formatversion=2 JSON,
`permissiondenied` for !patrolled without the right, `maxlag` with
Retry-After when asked to, a session cookie after action=login) and records
every request so tests can check what fanout sent. The tests in this module
read the whole fixture world through fanout's own parsers: every listed row,
and the diff of every edit whose two revisions are stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import respx

from fanout.wikidata.entity_diff import diff_entities
from fanout.wikidata.recentchanges import RecentChange

FIXTURES = Path(__file__).parent / "fixtures" / "wikidata"
API_URL = "https://www.wikidata.org/w/api.php"
ENTITY_DATA = "https://www.wikidata.org/wiki/Special:EntityData/"
SESSION_COOKIE = "wikidatawikiSession"
SESSION_VALUE = "c0ffee0123456789abcdef"


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def request_params(request: httpx.Request) -> dict[str, str]:
    """Query string and form body together, as MediaWiki reads them."""
    params = {k: v for k, v in request.url.params.items()}
    if request.method == "POST":
        for key, values in parse_qs(request.content.decode("utf-8"), keep_blank_values=True).items():
            params[key] = values[-1]
    return params


class FakeWikidata:
    """Wikidata as the fixtures describe it. Knobs:

    bot_user/bot_password: the one bot password action=login accepts;
    oauth_token: the one bearer token accepted;
    patrol_right: whether the signed-in account may see patrol flags;
    maxlag_answers: how many API requests get the maxlag error first;
    failing_entities: (qid, revision) pairs whose EntityData answers HTTP 500;
    label_batches_before_failure: after this many wbgetentities batches the API
        answers a database error that no retry can fix (a fetch that must stop).
    """

    def __init__(
        self,
        router: respx.MockRouter,
        *,
        bot_user: str = "Example Patroller@fanout",
        bot_password: str = "bot-password-not-used-anywhere",
        oauth_token: str | None = None,
        patrol_right: bool = True,
        maxlag_answers: int = 0,
    ) -> None:
        self.bot_user = bot_user
        self.bot_password = bot_password
        self.oauth_token = oauth_token
        self.patrol_right = patrol_right
        self.maxlag_answers = maxlag_answers
        self.failing_entities: set[tuple[str, int]] = set()
        self.label_batches_before_failure: int | None = None
        self.requests: list[httpx.Request] = []
        self.api_calls: list[dict[str, str]] = []
        self.entity_calls: list[tuple[str, int | None]] = []
        self.label_batches: list[list[str]] = []
        self.labels: dict[str, str] = load("labels.json")
        router.route(url__startswith=API_URL).mock(side_effect=self._api)
        router.route(url__startswith=ENTITY_DATA).mock(side_effect=self._entity)

    # --- api.php ----------------------------------------------------------------------

    def _api(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        params = request_params(request)
        self.api_calls.append(params)
        if self.maxlag_answers > 0:
            self.maxlag_answers -= 1
            return httpx.Response(
                200, json=load("error_maxlag.json"), headers={"Retry-After": "5", "X-Database-Lag": "6"}
            )
        if params.get("action") == "login":
            return self._login(params)
        if params.get("action") == "wbgetentities":
            return self._wbgetentities(params)
        if params.get("meta") == "tokens":
            return httpx.Response(200, json=load("login_token.json"))
        if self._bad_bearer(request):
            return httpx.Response(200, json=load("error_oauth_invalid.json"))
        if params.get("meta") == "userinfo":
            return httpx.Response(200, json=load(self._userinfo_fixture(request)))
        if params.get("list") == "recentchanges":
            return self._recentchanges(request, params)
        if params.get("prop") == "revisions":
            name = f"revisions_{params['titles']}.json"
            return httpx.Response(200, json=load(name if (FIXTURES / name).exists() else "revisions_missing.json"))
        if params.get("list") == "logevents":
            name = f"logevents_patrol_{params['letitle']}.json"
            return httpx.Response(200, json=load(name if (FIXTURES / name).exists() else "logevents_empty.json"))
        return httpx.Response(200, json={"error": {"code": "badvalue", "info": f"unexpected request {params}"}})

    def _login(self, params: Mapping[str, str]) -> httpx.Response:
        token = load("login_token.json")["query"]["tokens"]["logintoken"]
        accepted = (
            params.get("lgname") == self.bot_user
            and params.get("lgpassword") == self.bot_password
            and params.get("lgtoken") == token
        )
        if not accepted:
            return httpx.Response(200, json=load("login_failed.json"))
        return httpx.Response(
            200,
            json=load("login_success.json"),
            headers={"Set-Cookie": f"{SESSION_COOKIE}={SESSION_VALUE}; path=/; secure; HttpOnly"},
        )

    def signed_in(self, request: httpx.Request) -> bool:
        cookie = request.headers.get("Cookie", "")
        bearer = request.headers.get("Authorization", "")
        return f"{SESSION_COOKIE}={SESSION_VALUE}" in cookie or (
            self.oauth_token is not None and bearer == f"Bearer {self.oauth_token}"
        )

    def _bad_bearer(self, request: httpx.Request) -> bool:
        bearer = request.headers.get("Authorization")
        return bearer is not None and bearer != f"Bearer {self.oauth_token}"

    def _userinfo_fixture(self, request: httpx.Request) -> str:
        if not self.signed_in(request):
            return "userinfo_anon.json"
        return "userinfo_patroller.json" if self.patrol_right else "userinfo_plain.json"

    def _recentchanges(self, request: httpx.Request, params: Mapping[str, str]) -> httpx.Response:
        assert set(params["rcnamespace"].split("|")) <= {"0", "120", "146"} and params["rctype"] == "edit", params
        shows = params.get("rcshow", "").split("|")
        if "!patrolled" in shows and not (self.signed_in(request) and self.patrol_right):
            return httpx.Response(200, json=load("error_permissiondenied.json"))
        tag = params.get("rctag")
        if tag == "new editor changing statement":
            return httpx.Response(200, json=load("recentchanges_tag_changing.json"))
        if tag == "new editor removing statement":
            return httpx.Response(200, json=load("recentchanges_tag_removing.json"))
        if params.get("rccontinue") == "20260219075500|2540801098":
            return httpx.Response(200, json=load("recentchanges_unpatrolled_page2.json"))
        return httpx.Response(200, json=load("recentchanges_unpatrolled_page1.json"))

    def _wbgetentities(self, params: Mapping[str, str]) -> httpx.Response:
        ids = params["ids"].split("|")
        if len(ids) > 50:
            return httpx.Response(200, json={"error": {"code": "toomanyvalues", "info": "Too many values supplied for parameter \"ids\". The limit is 50."}})
        if self.label_batches_before_failure is not None and len(self.label_batches) >= self.label_batches_before_failure:
            return httpx.Response(200, json=load("error_internal.json"))
        self.label_batches.append(ids)
        entities: dict[str, Any] = {}
        for entity_id in ids:
            if entity_id in self.labels:
                kind = "property" if entity_id.startswith("P") else "item"
                entities[entity_id] = {
                    "type": kind,
                    "id": entity_id,
                    "labels": {"en": {"language": "en", "value": self.labels[entity_id]}},
                }
            else:
                entities[entity_id] = {"id": entity_id, "missing": ""}
        return httpx.Response(200, json={"entities": entities, "success": 1})

    # --- Special:EntityData -----------------------------------------------------------

    def _entity(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        qid = request.url.path.rsplit("/", 1)[-1].removesuffix(".json")
        revision = request.url.params.get("revision")
        self.entity_calls.append((qid, int(revision) if revision else None))
        if (qid, int(revision or 0)) in self.failing_entities:
            return httpx.Response(500, text="upstream connect error")
        path = FIXTURES / "entities" / f"{qid}-{revision}.json"
        if not path.exists():
            return httpx.Response(404, text=f"Invalid ID: {qid} at revision {revision}")
        return httpx.Response(200, json=load(f"entities/{path.name}"))


# --- the fixture world read by fanout ----------------------------------------------------


def listed_changes() -> list[RecentChange]:
    """Every row of every recentchanges listing (a revision in two listings comes twice)."""
    return [
        RecentChange.from_api(row)
        for path in sorted(FIXTURES.glob("recentchanges_*.json"))
        for row in load(path.name)["query"]["recentchanges"]
    ]


HIDDEN = ("userhidden", "commenthidden", "sha1hidden", "suppressed")
LISTED = {
    # rcid: (revid, parent_revid, title, user, hidden), (family, property, value, user comment)
    2540801101: ((2464599101, 2463871150, "Q42", "81.107.44.12", ()), ("statement", "P569", "11 March 1852", None)),
    2540801100: ((2464599050, 2464598820, "Q7259", "Analytical Engine Fan", ()), ("label", None, "Ada Lovelace", None)),
    2540801099: ((2464599317, 2462209841, "Q80", "Citation Hunter", ()), ("reference", "P569", "8 June 1955", None)),
    2540801098: ((2464598990, 2462774108, "Q76", "Potus Ledger", ()), ("statement", "P39", "Q11696", None)),
    2540801097: ((2464598900, 2464598000, "Q999", None, HIDDEN), (None, None, None, None)),
    2540801096: ((2464598800, 2464598100, "Q1000", "Gone Editor", ()), ("statement", "P31", "Q5", None)),
    2540801095: ((2464598700, 2463990215, "Q937", "Quantumfoam77", ()), ("statement", "P106", "Q169470", "not a physicist")),
}


def test_every_listed_row_is_read_into_its_revisions_editor_hidden_parts_and_summary() -> None:
    changes = listed_changes()
    for change in changes:
        summary = change.summary
        got = ((change.revid, change.parent_revid, change.title, change.user, change.hidden),
               (summary.family, summary.property, summary.value_raw, summary.user_comment))
        assert got == LISTED[change.rcid], change.rcid
    assert {change.rcid for change in changes} == set(LISTED)


DIFFS = {
    # rcid: the change between its parent revision and its own (type, property, detail property, old, new)
    2540801101: ("value_changed", "P569", None, "+1952-03-11T00:00:00Z", "+1852-03-11T00:00:00Z"),
    2540801099: ("reference_added", "P569", "P854", None, "https://www.britannica.com/biography/Tim-Berners-Lee"),
    2540801098: ("qualifier_added", "P39", "P580", None, "+2009-01-20T00:00:00Z"),
    2540801095: ("value_removed", "P106", None, "Q169470", None),
}


def stored_item(qid: str, revision: int) -> dict[str, Any] | None:
    path = FIXTURES / "entities" / f"{qid}-{revision}.json"
    return load(f"entities/{path.name}")["entities"][qid] if path.exists() else None


def test_every_edit_whose_revisions_are_stored_is_diffed_into_exactly_its_one_change() -> None:
    diffed: dict[int, list[tuple[object, ...]]] = {}
    for change in listed_changes():
        old, new = stored_item(change.title, change.parent_revid), stored_item(change.title, change.revid)
        if old is not None and new is not None:
            diffed[change.rcid] = [(c.type, c.property, c.detail_property, c.old, c.new)
                                   for c in diff_entities(old, new).changes]
    assert diffed == {rcid: [expected] for rcid, expected in DIFFS.items()}
