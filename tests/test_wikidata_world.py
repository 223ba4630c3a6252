"""A stand-in for Wikidata, served through respx from tests/fixtures/wikidata.

The other test_wikidata_* modules import FakeWikidata from here. It answers
the way the real api.php and Special:EntityData do (formatversion=2 JSON,
`permissiondenied` for !patrolled without the right, `maxlag` with
Retry-After when asked to, a session cookie after action=login) and records
every request so tests can check what fanout sent. The tests in this module
check that the fixtures themselves keep the documented shapes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import respx

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
        assert params["rcnamespace"] == "0" and params["rctype"] == "edit", params
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


# --- the fixtures keep the documented shapes ---------------------------------------------

RC_FIELDS = {"type", "ns", "title", "pageid", "revid", "old_revid", "rcid", "timestamp", "tags"}


def test_every_recentchanges_fixture_row_has_the_fields_rcprop_asks_for() -> None:
    for name in sorted(FIXTURES.glob("recentchanges_*.json")):
        rows = json.loads(name.read_text(encoding="utf-8"))["query"]["recentchanges"]
        for row in rows:
            assert RC_FIELDS <= set(row), (name.name, row["rcid"])
            assert ("comment" in row) != bool(row.get("commenthidden")), (name.name, row["rcid"])


def test_every_entity_fixture_is_special_entitydata_json_for_its_own_item_and_revision() -> None:
    for path in sorted((FIXTURES / "entities").glob("*.json")):
        qid, revision = path.stem.split("-")
        entity = json.loads(path.read_text(encoding="utf-8"))["entities"][qid]
        assert (entity["id"], entity["type"], entity["lastrevid"]) == (qid, "item", int(revision))
        for pid, statements in entity["claims"].items():
            for statement in statements:
                assert statement["id"].startswith(f"{qid}$")
                assert statement["mainsnak"]["property"] == pid
                assert {"snaktype", "hash", "datatype"} <= set(statement["mainsnak"])
