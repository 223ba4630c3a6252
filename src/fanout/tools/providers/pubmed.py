"""PubMed: biomedical literature through NCBI's E-utilities, two requests per search (no key needed).

    GET {eutils}/esearch.fcgi?db=pubmed&term=...&retmode=json&retmax=N&sort=relevance&tool=fanout[&email][&api_key]
 -> {"esearchresult": {"count", "idlist": [PMID, ...], ...}}
    GET {eutils}/esummary.fcgi?db=pubmed&id=PMID,PMID&retmode=json&tool=fanout[&email][&api_key]
 -> {"result": {"uids": [PMID, ...], PMID: {"title", "source", "fulljournalname", "pubdate",
                                             "authors": [{"name"}], "pubtype", "articleids", ...}}}

A hit links to the article's PubMed page, https://pubmed.ncbi.nlm.nih.gov/PMID/
(`article_url` in the provider's settings replaces it: a mirror, the simulator);
its snippet is what the summary gives: authors, journal, date, publication
types worth knowing (a review, a retraction) and the DOI.

NCBI's published limits: 3 requests a second from one address without a key,
10 with an API key (NCBI_API_KEY, sent as `api_key`); past them it answers 429
with {"error": "API rate limit exceeded", "api-key": <the key or the address>,
"count", "limit"}, so that body is never quoted. NCBI also asks every tool to
send `tool` and `email` (NCBI_EMAIL). Requests are spaced by a pacer (a little
over a third, or a tenth, of a second) and both requests of a search share one
deadline. Errors can also arrive in a 200 body: `esearchresult.ERROR` (e.g.
"Search Backend failed: ..."), a top-level `error`, or an `error` in place of
one article's summary (that article is left out).
"""

from __future__ import annotations

import os
import re
from typing import Any

import anyio
import httpx

from fanout.base.errors import ConfigError
from fanout.base.secret import Secret
from fanout.tools.pacing import HostPacer
from fanout.tools.providers.base import ProviderResult, SearchFailure, SearchHit, check_status, json_body, send, strip_html
from fanout.tools.providers.keys import keep_out_of_http_log, optional_key_from_env, redact, require_carryable
from fanout.tools.settings import PMID_FIELD, SEARCH_TIMEOUT_S, ToolSettings

ENDPOINT = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
ARTICLE_URL = "https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
KEY_VARIABLE = "NCBI_API_KEY"
EMAIL_VARIABLE = "NCBI_EMAIL"
TOOL = "fanout"
GAP_WITHOUT_KEY_S = 0.35
"""NCBI allows 3 requests a second without a key; a little over a third of a second apart stays under it."""
GAP_WITH_KEY_S = 0.11
"""... and 10 a second with one."""
MAX_RESULTS = 100
SHOWN_AUTHORS = 3
PLAIN_TYPES = frozenset({"Journal Article"})
"""Publication types every article has, left out of the snippet (a review or a retraction is worth saying)."""
_PMID = re.compile(r"[0-9]{1,12}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


class PubMedProvider:
    name = "pubmed"
    label = "PubMed"
    key_variable = KEY_VARIABLE

    def __init__(self, key: Secret | None = None, *, email: str | None = None, max_results: int = 10,
                 timeout_s: float = SEARCH_TIMEOUT_S, endpoint: str | None = None, article_url: str | None = None,
                 pacer: HostPacer | None = None, request_gap_s: float | None = None) -> None:
        self._key = key
        if key is not None:
            keep_out_of_http_log(key)
        self.email = email
        self.max_results = min(max_results, MAX_RESULTS)
        self.timeout_s = timeout_s
        self.endpoint = (endpoint or ENDPOINT).rstrip("/") + "/"
        self.article_url = article_url or ARTICLE_URL
        published = GAP_WITHOUT_KEY_S if key is None else GAP_WITH_KEY_S
        self.request_gap_s = published if request_gap_s is None else request_gap_s
        """The least time between two requests to NCBI: the limit that applies (with a key or without), unless the
        search config's request_gap says otherwise (a mirror, the simulator)."""
        self._pacer = pacer or HostPacer(self.request_gap_s)

    @classmethod
    def from_settings(cls, settings: ToolSettings) -> PubMedProvider:
        """The key and the contact address from the environment; ConfigError naming a variable that is unusable."""
        return cls(optional_key_from_env(KEY_VARIABLE), email=email_from_env(), timeout_s=settings.search_timeout_s,
                   max_results=settings.max_results_for(cls.name), endpoint=settings.endpoint(cls.name),
                   article_url=settings.provider(cls.name).article_url,
                   request_gap_s=settings.provider(cls.name).request_gap_s)

    async def search(self, query: str, http: httpx.AsyncClient) -> ProviderResult:
        try:
            with anyio.fail_after(self.timeout_s):
                return ProviderResult(await self._hits(query, http))
        except TimeoutError:
            return ProviderResult([], f"{self.label} did not answer within {self.timeout_s:g} s", retryable=True)
        except SearchFailure as exc:
            result = exc.result()
            return result._replace(error=redact(str(result.error), self._key))

    async def _hits(self, query: str, http: httpx.AsyncClient) -> list[SearchHit]:
        term = " ".join(query.split())
        if not term:
            return []
        found = await self._ask(http, "esearch.fcgi", {"term": term, "retmax": str(self.max_results),
                                                        "sort": "relevance"})
        pmids = found_pmids(found)
        if not pmids:
            return []
        summaries = await self._ask(http, "esummary.fcgi", {"id": ",".join(pmids)})
        return [self.hit(summary) for summary in article_summaries(summaries)]

    async def _ask(self, http: httpx.AsyncClient, utility: str, params: dict[str, str]) -> Any:
        """One E-utility's JSON, paced; SearchFailure for a refusal, a rate limit, or an error in the body."""
        query = {"db": "pubmed", **params, "retmode": "json", "tool": TOOL}
        if self.email:
            query["email"] = self.email
        if self._key is not None:
            query["api_key"] = self._key.reveal()
        request = http.build_request("GET", self.endpoint + utility, params=query, timeout=self.timeout_s)
        await self._pacer.wait(request.url.host)
        response = await send(http, request, label=self.label, timeout_s=self.timeout_s)
        if not response.is_success:
            raise self._refusal(response)
        data = json_body(response, label=self.label)
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, str) and error:
            raise body_error(error, self._key is not None)
        return data

    def _refusal(self, response: httpx.Response) -> SearchFailure:
        """A 429 says which limit (never the `api-key` its body quotes); a refused key names its variable."""
        body = _json_or_none(response)
        error = str(body.get("error") or "") if isinstance(body, dict) else ""
        if response.status_code == 429 or "rate limit" in error.lower():
            return rate_limited(self._key is not None)
        if "api key" in error.lower():
            return SearchFailure(f"{self.label} refused the API key (HTTP {response.status_code}: {error}) "
                                 f"(for the operator: check {KEY_VARIABLE}, or unset it to search without one)")
        try:
            check_status(response, label=self.label)
        except SearchFailure as exc:
            return exc
        return SearchFailure(f"{self.label} answered HTTP {response.status_code}", retryable=True)

    def hit(self, summary: dict[str, Any]) -> SearchHit:
        """One article: its title, its PubMed page, and authors, journal, date, types and DOI as the snippet."""
        pmid = str(summary["uid"])
        published = text(summary.get("pubdate")) or None
        return SearchHit(strip_html(text(summary.get("title"))), self.article_url.replace(PMID_FIELD, pmid),
                         snippet_of(summary), published=published)


def found_pmids(data: Any) -> list[str]:
    """The PMIDs esearch found, best first; SearchFailure for the error esearch reports in a 200 body."""
    found = data.get("esearchresult") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        raise SearchFailure("PubMed returned JSON without esearchresult", retryable=True)
    error = found.get("ERROR")
    if isinstance(error, str) and error:
        # "Search Backend failed: ..." is NCBI's side and passes; anything else is about the query.
        raise SearchFailure(f"PubMed could not search: {error}", retryable=error.startswith("Search Backend failed"))
    ids = found.get("idlist")
    if not isinstance(ids, list):
        raise SearchFailure("PubMed returned esearchresult without an idlist", retryable=True)
    return [str(pmid) for pmid in ids if _PMID.fullmatch(str(pmid))]


def article_summaries(data: Any) -> list[dict[str, Any]]:
    """The summaries in the order esummary lists them (the order asked), without the ones it could not give."""
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, dict) or not isinstance(result.get("uids"), list):
        raise SearchFailure("PubMed returned an esummary answer without result.uids", retryable=True)
    summaries = (result.get(str(uid)) for uid in result["uids"])
    return [summary for summary in summaries
            if isinstance(summary, dict) and not summary.get("error") and _PMID.fullmatch(str(summary.get("uid")))
            and text(summary.get("title"))]


def snippet_of(summary: dict[str, Any]) -> str:
    """`Gupta D, Bhattacharjee O, Mandal D et al. Life sciences, 2019 Sep 1. Review. doi: 10.1016/...`."""
    told = ". ".join(part for part in (_byline(summary).removesuffix("."), _where(summary), _types(summary)) if part)
    told = f"{told}." if told else ""
    doi = _doi(summary)
    return f"{told} doi: {doi}".strip() if doi else told  # no full stop after a DOI: it would read as part of it


def _byline(summary: dict[str, Any]) -> str:
    """The first SHOWN_AUTHORS authors, then `et al.`."""
    names = [text(a.get("name")) for a in summary.get("authors") or [] if isinstance(a, dict) and text(a.get("name"))]
    return ", ".join(names[:SHOWN_AUTHORS]) + (" et al." if len(names) > SHOWN_AUTHORS else "")


def _where(summary: dict[str, Any]) -> str:
    """The journal (its full name when given) and the date."""
    journal = text(summary.get("fulljournalname")) or text(summary.get("source"))
    return ", ".join(part for part in (journal, text(summary.get("pubdate"))) if part)


def _types(summary: dict[str, Any]) -> str:
    """The publication types worth knowing (a review, a retraction), not the plain article's."""
    return "; ".join(t for t in summary.get("pubtype") or [] if isinstance(t, str) and t not in PLAIN_TYPES)


def _doi(summary: dict[str, Any]) -> str:
    return next((text(i.get("value")) for i in summary.get("articleids") or []
                 if isinstance(i, dict) and i.get("idtype") == "doi" and text(i.get("value"))), "")


def body_error(error: str, keyed: bool) -> SearchFailure:
    """An `error` NCBI wrote in a body: a rate limit, a refused key, or something it could not do."""
    if "rate limit" in error.lower():
        return rate_limited(keyed)
    if "api key" in error.lower():
        return SearchFailure(f"PubMed refused the API key ({error}) (for the operator: check {KEY_VARIABLE})")
    return SearchFailure(f"PubMed answered an error: {error}", retryable=True)


def rate_limited(keyed: bool) -> SearchFailure:
    limit = "10 requests a second with an API key" if keyed else (
        f"3 requests a second without an API key; for the operator: {KEY_VARIABLE} raises it to 10")
    return SearchFailure(f"PubMed rate-limited the request (HTTP 429; NCBI allows {limit})", retryable=True,
                         rate_limited=True)


def email_from_env() -> str | None:
    """The contact address NCBI asks tools to send, from NCBI_EMAIL; ConfigError for one no request can carry."""
    value = (os.environ.get(EMAIL_VARIABLE) or "").strip()
    if not value:
        return None
    require_carryable(value, EMAIL_VARIABLE)
    if not _EMAIL.fullmatch(value):
        raise ConfigError(f"{EMAIL_VARIABLE} must be an e-mail address such as you@example.org")
    return value


def text(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return json_body(response, label="PubMed")
    except SearchFailure:
        return None
