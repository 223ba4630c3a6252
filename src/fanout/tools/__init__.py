"""The web tools every model gets: web_search (search providers) and web_fetch (httpx + trafilatura).

    TOOL_NAMES, TOOL_SCHEMAS   what the model is offered (seed 000's schemas)
    ToolBox                    web_search / web_fetch / dispatch, never raising for bad input
    ToolResult                 (text, ok, final_url): the text is exactly what the model receives
    ToolCache                  the run's SQLite cache shared by every model (RUN_DIR/search-cache.sqlite)
    open_run_toolbox           the run's ToolBox with its caches, closed on exit
    load_blocked_domains       the domains neither tool will hand to a model

Inside: urlguard (which URLs may be opened), blocklist, pacing (per-host
politeness), body (capped reading), fetch (hops and checks), extract
(trafilatura off the event loop), providers/ (SearXNG, Wikipedia, Tavily,
Brave, DuckDuckGo, arXiv and plug-ins), search (priority fallback), cache,
singleflight, health (the "search is failing" alarm), executor (ToolBox).
"""

from __future__ import annotations

from fanout.tools.blocklist import load_blocked_domains
from fanout.tools.cache import ToolCache
from fanout.tools.executor import ToolBox, ToolResult
from fanout.tools.run_tools import open_run_toolbox
from fanout.tools.schemas import TOOL_NAMES, TOOL_SCHEMAS

__all__ = [
    "TOOL_NAMES",
    "TOOL_SCHEMAS",
    "ToolBox",
    "ToolCache",
    "ToolResult",
    "load_blocked_domains",
    "open_run_toolbox",
]
