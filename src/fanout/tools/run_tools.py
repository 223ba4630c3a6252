"""The ToolBox a run uses: its cache lives in the run directory, so a resume reuses it.

    async with open_run_toolbox(http, settings, run_dir) as tools: ...

opens RUN_DIR/search-cache.sqlite (and the global search cache when
`global_cache_dir` is set) and the pool of extraction workers, and closes
them all on exit, even on cancellation. The run's cache remembers in memory
what it holds (fanout.tools.cache): its caller owns the run directory (the
run's lock), so no other process writes that file meanwhile.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import httpx

from fanout.tools.settings import ToolSettings
from fanout.tools.cache import RUN_CACHE_MEMORY_CHARS, RUN_CACHE_NAME, ToolCache
from fanout.tools.executor import ToolBox
from fanout.tools.extract_pool import ExtractionPool

GLOBAL_CACHE_NAME = "search-cache.sqlite"


@asynccontextmanager
async def open_run_toolbox(http: httpx.AsyncClient, settings: ToolSettings, run_dir: Path) -> AsyncIterator[ToolBox]:
    async with AsyncExitStack() as stack:
        cache = await ToolCache.open(run_dir / RUN_CACHE_NAME, ttl_s=settings.search_cache_ttl_s,
                                     remember_chars=RUN_CACHE_MEMORY_CHARS)  # the run's lock: no other writer
        stack.push_async_callback(cache.aclose)
        global_cache = None
        if settings.global_cache_dir is not None:
            global_cache = await ToolCache.open(
                Path(settings.global_cache_dir).expanduser() / GLOBAL_CACHE_NAME, ttl_s=settings.global_cache_ttl_s
            )
            stack.push_async_callback(global_cache.aclose)
        extractor = await stack.enter_async_context(ExtractionPool.from_settings(settings))
        yield ToolBox(http, settings, cache=cache, global_cache=global_cache, extractor=extractor)
