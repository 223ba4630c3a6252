"""Each provider's own settings, min_results in fallback, their manifest pins, and register_provider.

The providers here are written in the test and registered with
`fanout.tools.register_provider`, so every search goes through the path a run
takes (ToolSettings names them, build_providers builds them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import anyio
import httpx
import pytest
import yaml

from fanout.workloads import PATROL
from fanout.base.errors import ConfigError
from fanout.base.records import VerdictRecord
from fanout.base.validate import package_data
from fanout.engine.runner import RunRequest, run
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.tools import ToolBox, register_provider, unregister_provider
from fanout.tools.cache import ToolCache
from fanout.tools.providers import ENTRY_POINT_GROUP, ProviderResult, SearchHit, build_providers, registry
from fanout.tools import provider_names
from fanout.tools.search import chain_cache_key
from fanout.tools.search_config import apply_search_options
from fanout.tools.settings import ProviderSettings, ToolSettings


class Scripted:
    """A provider written in Python: fixed hits (or a fixed failure), and a count of the times it was asked."""

    def __init__(self, name: str, urls: list[str], error: str | None = None) -> None:
        self.name = name
        self.urls = urls
        self.error = error
        self.asked = 0

    async def search(self, query: str, http: httpx.AsyncClient) -> ProviderResult:
        self.asked += 1
        if self.error is not None:
            return ProviderResult([], self.error, retryable=True)
        return ProviderResult([SearchHit(f"{self.name} {n}", url, f"{query} at {url}") for n, url in enumerate(self.urls)])


Register = Callable[..., Scripted]


@pytest.fixture
def scripted() -> Iterator[Register]:
    made: list[str] = []

    def register(name: str, urls: list[str], error: str | None = None) -> Scripted:
        provider = Scripted(name, urls, error)
        register_provider(name, lambda settings: provider)
        made.append(name)
        return provider

    yield register
    for name in made:
        unregister_provider(name)


def urls(payload: dict) -> list[tuple[str, str]]:
    return [(hit["url"], hit["provider"]) for hit in payload["results"]]


# --- register_provider ----------------------------------------------------------------------------

async def test_a_provider_written_in_python_is_registered_and_answers_web_search_by_name(scripted, http, tmp_path):
    scripted("mine", ["https://mine.example/a"])
    config = tmp_path / "search.yaml"
    config.write_text("providers: [mine]\n", encoding="utf-8")

    box = ToolBox(http, apply_search_options(ToolSettings(), providers=None, config=config))
    result = await box.web_search("ada")

    assert json.loads(result.text) == {
        "results": [{"title": "mine 0", "url": "https://mine.example/a", "snippet": "ada at https://mine.example/a",
                     "provider": "mine"}],
        "provider": "mine"}
    assert "mine" in registry.available_providers()


def test_a_registered_name_is_found_before_an_entry_point_of_the_same_name(scripted, monkeypatch):
    monkeypatch.setattr(provider_names, "entry_points", lambda group: [
        EntryPoint(name="mine", value="no_such_module_for_fanout:make", group=ENTRY_POINT_GROUP)])
    mine = scripted("mine", [])

    assert build_providers(ToolSettings(search_providers=("mine",))) == [mine]


@pytest.mark.parametrize(("name", "factory", "error", "message"), [
    ("searxng", lambda settings: None, ValueError, "'searxng' is a built-in search provider and cannot be replaced"),
    ("My Search", lambda settings: None, ValueError,
     "a search provider's name is lower-case letters, digits, - and _ (got 'My Search')"),
    ("mine", "not callable", TypeError,
     "the factory for search provider 'mine' is not callable: (ToolSettings) -> provider"),
])
def test_register_provider_refuses_what_could_only_be_a_mistake(name, factory, error, message):
    with pytest.raises(error) as refused:
        register_provider(name, factory)
    assert str(refused.value) == message


def test_a_name_is_registered_once_unless_replace_is_asked_for(scripted):
    first = scripted("mine", [])
    with pytest.raises(ValueError, match=r"^search provider 'mine' is registered already \(pass replace=True"):
        register_provider("mine", lambda settings: None)
    second = Scripted("mine", [])
    register_provider("mine", lambda settings: second, replace=True)

    assert build_providers(ToolSettings(search_providers=("mine",))) == [second] != [first]


# --- min_results -----------------------------------------------------------------------------------

def three(scripted: Register) -> tuple[Scripted, Scripted, Scripted]:
    alpha = scripted("alpha", ["https://a.example/1", "https://a.example/2", "https://a.example/3"])
    beta = scripted("beta", ["https://www.a.example/3/", "https://b.example/1", "https://b.example/2"])
    gamma = scripted("gamma", ["https://c.example/1"])
    return alpha, beta, gamma


async def test_min_results_asks_on_until_that_many_distinct_pages_and_no_further(scripted, http):
    alpha, beta, gamma = three(scripted)
    settings = ToolSettings(search_providers=("alpha", "beta", "gamma"), search_min_results=5)

    payload = json.loads((await ToolBox(http, settings).web_search("q")).text)

    assert urls(payload) == [("https://a.example/1", "alpha"), ("https://a.example/2", "alpha"),
                             ("https://a.example/3", "alpha"), ("https://b.example/1", "beta"),
                             ("https://b.example/2", "beta")]  # beta's copy of a.example/3 is left out
    assert payload["providers"] == ["alpha", "beta"] and "provider" not in payload
    assert (alpha.asked, beta.asked, gamma.asked) == (1, 1, 0)


async def test_without_min_results_the_first_provider_with_a_result_answers_as_before(scripted, http):
    alpha, beta, gamma = three(scripted)

    payload = json.loads((await ToolBox(http, ToolSettings(search_providers=("alpha", "beta", "gamma")))
                          .web_search("q")).text)

    assert payload["provider"] == "alpha" and "providers" not in payload
    assert (alpha.asked, beta.asked, gamma.asked) == (1, 0, 0)


async def test_an_answer_short_of_min_results_because_a_provider_failed_is_asked_again_next_time(scripted, http):
    scripted("alpha", ["https://a.example/1"])
    beta = scripted("beta", [], error="beta is down")
    cache = await ToolCache.open(None)
    try:
        box = ToolBox(http, ToolSettings(search_providers=("alpha", "beta"), search_min_results=3), cache=cache)
        first = json.loads((await box.web_search("q")).text)
        await box.web_search("q")
    finally:
        await cache.aclose()

    assert (urls(first), first["failed_providers"]) == ([("https://a.example/1", "alpha")], {"beta": "beta is down"})
    assert beta.asked == 2


async def test_an_answer_short_of_min_results_with_every_provider_asked_is_kept_for_the_run(scripted, http):
    alpha = scripted("alpha", ["https://a.example/1"])
    cache = await ToolCache.open(None)
    try:
        box = ToolBox(http, ToolSettings(search_providers=("alpha",), search_min_results=3), cache=cache)
        first = await box.web_search("q")
        second = await box.web_search("q")
    finally:
        await cache.aclose()

    assert second == first and alpha.asked == 1


# --- a provider's own max_results and cache_ttl ------------------------------------------------------

async def test_a_provider_s_own_max_results_caps_what_it_contributes(scripted, http):
    three(scripted)
    own = (("alpha", ProviderSettings(max_results=1)),)
    fallback = ToolSettings(search_providers=("alpha", "beta"), search_min_results=3, provider_settings=own)
    aggregate = ToolSettings(search_providers=("alpha", "beta"), search_mode="aggregate", provider_settings=own)

    by_fallback = json.loads((await ToolBox(http, fallback).web_search("q")).text)
    by_aggregate = json.loads((await ToolBox(http, aggregate).web_search("q")).text)

    assert urls(by_fallback) == [("https://a.example/1", "alpha"), ("https://www.a.example/3/", "beta"),
                                 ("https://b.example/1", "beta"), ("https://b.example/2", "beta")]
    assert [hit["url"] for hit in by_aggregate["results"]] == [
        "https://a.example/1", "https://www.a.example/3/", "https://b.example/1", "https://b.example/2"]


async def test_a_stored_answer_older_than_the_provider_s_cache_ttl_is_asked_again(scripted, http, tmp_path):
    alpha = scripted("alpha", ["https://a.example/1"])
    now = [1_000.0]
    settings = ToolSettings(search_providers=("alpha",), provider_settings=(
        ("alpha", ProviderSettings(cache_ttl_s=60)),))

    async def search_in_a_new_run() -> None:
        shared = await ToolCache.open(tmp_path / "global.sqlite", clock=lambda: now[0])
        try:
            await ToolBox(http, settings, cache=await ToolCache.open(None), global_cache=shared).web_search("q")
        finally:
            await shared.aclose()

    await search_in_a_new_run()
    now[0] += 59
    await search_in_a_new_run()
    assert alpha.asked == 1  # 59 s old: still good
    now[0] += 2
    await search_in_a_new_run()
    assert alpha.asked == 2  # 61 s old: asked again


async def test_the_cache_reads_an_entry_within_the_tighter_of_its_ttl_and_the_caller_s_bound(tmp_path):
    now = [0.0]
    cache = await ToolCache.open(tmp_path / "c.sqlite", ttl_s=100, clock=lambda: now[0])
    try:
        await cache.put_search("p", "q", {"hits": []})
        now[0] = 50
        found = [await cache.get_search("p", "q"), await cache.get_search("p", "q", max_age_s=40),
                 await cache.get_search("p", "q", max_age_s=500)]
        now[0] = 150
        late = await cache.get_search("p", "q", max_age_s=500)
    finally:
        await cache.aclose()

    assert (found, late) == ([{"hits": []}, None, {"hits": []}], None)


def test_the_run_keeps_its_answer_apart_for_each_min_results_and_cap():
    assert chain_cache_key("fallback", ["searxng", "pubmed"]) == "chain:fallback:searxng,pubmed"
    assert chain_cache_key("fallback", ["searxng", "pubmed"], min_results=5,
                           caps={"pubmed": 3}) == "chain:fallback+min5:searxng,pubmed#3"


# --- the search config ---------------------------------------------------------------------------------

def read(tmp_path: Path, text: str, *, providers: str | None = None, mode: str | None = None) -> ToolSettings:
    config = tmp_path / "search.yaml"
    config.write_text(text, encoding="utf-8")
    return apply_search_options(ToolSettings(), providers=providers, config=config, mode=mode)


def test_the_search_config_gives_each_provider_its_own_settings_and_min_results(tmp_path):
    settings = read(tmp_path, "providers: [searxng, pubmed, wikipedia]\nmin_results: 5\nprovider_settings:\n"
                              "  pubmed: {max_results: 4, cache_ttl: 86400, "
                              "article_url: 'https://mirror.example/pubmed/{pmid}/'}\n"
                              "  wikipedia: {enabled: false}\n")

    assert settings.search_providers == ("searxng", "pubmed")
    assert settings.search_min_results == 5
    assert settings.provider("pubmed") == ProviderSettings(max_results=4, cache_ttl_s=86400,
                                                           article_url="https://mirror.example/pubmed/{pmid}/")
    assert (settings.max_results_for("pubmed"), settings.max_results_for("searxng")) == (4, 10)


def test_a_provider_the_file_disables_is_still_asked_when_the_flag_names_it(tmp_path):
    settings = read(tmp_path, "provider_settings: {wikipedia: {enabled: false}}\n", providers="searxng,wikipedia")

    assert settings.search_providers == ("searxng", "wikipedia")


@pytest.mark.parametrize(("text", "message"), [
    ("provider_settings: {bing: {max_results: 3}}\n", "provider_settings: bing: unknown search provider; available: "
     "searxng, wikipedia, tavily, brave, duckduckgo, arxiv, pubmed, serpapi"),
    ("provider_settings: [pubmed]\n", "provider_settings must be a mapping such as "
     "`provider_settings: {pubmed: {max_results: 5, cache_ttl: 86400}}`"),
    ("provider_settings: {pubmed: 5}\n", "provider_settings: pubmed: must be a mapping of enabled, max_results, "
     "cache_ttl, article_url, request_gap (got 5)"),
    ("provider_settings: {pubmed: {priority: 1}}\n", "provider_settings: pubmed: unknown key priority; allowed: "
     "enabled, max_results, cache_ttl, article_url, request_gap"),
    ("provider_settings: {serpapi: {api_key: x}}\n", "provider_settings: serpapi: API keys come from the environment "
     "only (TAVILY_API_KEY, BRAVE_API_KEY, SERPAPI_API_KEY, NCBI_API_KEY), never from a file"),
    ("provider_settings: {pubmed: {max_results: 0}}\n", "provider_settings: pubmed: max_results must be at least 1 "
     "(got 0)."),
    ("provider_settings: {pubmed: {max_results: 2.5}}\n", "provider_settings: pubmed: max_results must be a whole "
     "number (got 2.5)."),
    ("provider_settings: {pubmed: {max_results: 20}}\n", "provider_settings: pubmed: max_results (20) is more than "
     "the 10 results web_search hands a model."),
    ("provider_settings: {pubmed: {cache_ttl: -1}}\n", "provider_settings: pubmed: cache_ttl must be more than 0 "
     "(got -1)."),
    ("provider_settings: {pubmed: {enabled: maybe}}\n", "provider_settings: pubmed: enabled must be true or false "
     "(got 'maybe')."),
    ("provider_settings: {serpapi: {article_url: 'https://x.example/{pmid}'}}\n", "provider_settings: serpapi: "
     "article_url applies to pubmed only"),
    ("provider_settings: {pubmed: {article_url: 'https://x.example/'}}\n", "provider_settings: pubmed: article_url "
     "must be a URL with {pmid} where the PMID goes (got 'https://x.example/')."),
    ("provider_settings: {searxng: {enabled: false}}\n", "provider_settings disables every provider web_search "
     "would ask (searxng); enable one or list another under providers"),
    ("min_results: 0\n", "min_results must be at least 1 (got 0)."),
    ("min_results: 11\n", "min_results (11) is more than the 10 results web_search hands a model."),
    ("min_results: 3\nmode: aggregate\n", "min_results (3) applies to --search-mode fallback; aggregate mode asks "
     "every provider anyway."),
])
def test_a_bad_provider_setting_is_one_error_naming_the_file_and_the_key(tmp_path, text: str, message: str):
    with pytest.raises(ConfigError) as refused:
        read(tmp_path, text)

    assert str(refused.value) == f"--search-config {tmp_path / 'search.yaml'}: {message}"


# --- pinned in the manifest ------------------------------------------------------------------------

def test_the_manifest_pins_min_results_and_each_provider_s_cap_only_when_they_are_set():
    plain = RunSettings(models=(ModelSpec("m/a"),))
    tools = ToolSettings(search_providers=("searxng", "pubmed"), search_min_results=4, provider_settings=(
        ("pubmed", ProviderSettings(max_results=3, cache_ttl_s=60)), ("arxiv", ProviderSettings(max_results=2))))

    summary = RunSettings(models=(ModelSpec("m/a"),), tools=tools).summary()

    assert not {"search_min_results", "search_provider_settings"} & set(plain.summary())
    assert (summary["search_min_results"], summary["search_provider_settings"]) == (4, {"pubmed": {"max_results": 3}})
    assert list(summary)[:6] == ["base_url", "searxng_url", "search_providers", "search_mode", "search_min_results",
                                 "search_provider_settings"]


def scripted_settings_run(run_dir: Path, settings: RunSettings, *, allow: bool = False) -> None:
    """One edit of the sample through a scripted verdict: enough to write (or check) the run's manifest."""
    async def verdict(edit, model):
        return VerdictRecord(model=model.name, edit_rcid=edit.rcid, edit_revid=edit.revid, qid=edit.title,
                             property=edit.parsed.property, diff_type=edit.diff_type,
                             timestamp="2026-11-22T10:00:00Z", status="ok", verdict="plausible", cost_usd=0.25)

    request = RunRequest(package_data("sample_snapshot.yaml"), run_dir, settings, limit=1, handle_signals=False,
                         progress_interval_s=3600, allow_settings_change=allow, workload=PATROL)
    anyio.run(lambda: run(request, verdict_fn=verdict))


def test_a_resume_that_changes_min_results_is_refused_naming_it(tmp_path):
    run_dir = tmp_path / "run"
    started = ToolSettings(search_min_results=3)
    scripted_settings_run(run_dir, RunSettings(models=(ModelSpec("m/a"),), tools=started))
    changed = RunSettings(models=(ModelSpec("m/a"),), tools=ToolSettings(search_min_results=5))

    with pytest.raises(ConfigError) as refused:
        scripted_settings_run(run_dir, changed)

    assert str(refused.value) == (
        "cannot resume this run directory: min_results (--search-config) was 3 and is now 5. Resume with the settings "
        "it started with, use a new --run-dir, or --allow-settings-change to mix them knowingly (the manifest then "
        "records both).")
    scripted_settings_run(run_dir, changed, allow=True)
    [change] = yaml.safe_load((run_dir / "manifest.yaml").read_text())["changes"]
    assert (change["was"], change["now"]) == (3, 5)


def test_a_resume_that_sets_min_results_on_a_run_whose_manifest_lacks_it_compares_it_with_the_default(tmp_path):
    # The manifest of a run started at the default has no min_results key (recorded only when set), as has one
    # written before the setting existed: a missing key is the default, not "anything goes".
    run_dir = tmp_path / "run"
    scripted_settings_run(run_dir, RunSettings(models=(ModelSpec("m/a"),)))
    assert "search_min_results" not in yaml.safe_load((run_dir / "manifest.yaml").read_text())["settings"]
    changed = RunSettings(models=(ModelSpec("m/a"),), tools=ToolSettings(search_min_results=3))

    with pytest.raises(ConfigError) as refused:
        scripted_settings_run(run_dir, changed)

    assert str(refused.value).startswith(
        "cannot resume this run directory: min_results (--search-config) was 1 (the default) and is now 3. ")
    scripted_settings_run(run_dir, RunSettings(models=(ModelSpec("m/a"),)))  # the default again: no change


def test_a_manifest_written_before_a_pinned_setting_existed_resumes_at_its_default_and_not_otherwise(tmp_path):
    run_dir = tmp_path / "run"
    scripted_settings_run(run_dir, RunSettings(models=(ModelSpec("m/a"),)))
    manifest = yaml.safe_load((run_dir / "manifest.yaml").read_text())
    del manifest["settings"]["samples"], manifest["settings"]["search_mode"]  # as an older fanout wrote it
    (run_dir / "manifest.yaml").write_text(yaml.safe_dump(manifest))
    scripted_settings_run(run_dir, RunSettings(models=(ModelSpec("m/a"),)))
    manifest = yaml.safe_load((run_dir / "manifest.yaml").read_text())
    del manifest["settings"]["samples"]
    (run_dir / "manifest.yaml").write_text(yaml.safe_dump(manifest))

    with pytest.raises(ConfigError, match=r"^cannot resume this run directory: --samples was 1 \(the default\) and "
                                          r"is now 3\. "):
        scripted_settings_run(run_dir, RunSettings(models=(ModelSpec("m/a"),), samples=3))
