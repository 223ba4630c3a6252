"""The web tools every model gets: web_search (SearXNG) and web_fetch (httpx + trafilatura).

    TOOL_NAMES, TOOL_SCHEMAS   what the model is offered (seed 000's schemas)
    ToolBox                    web_search / web_fetch / dispatch, never raising for bad input
    ToolResult                 (text, ok): the text is exactly what the model receives
    load_blocked_domains       the domains neither tool will hand to a model

Inside: urlguard (which URLs may be opened), blocklist, pacing (per-host
politeness), body (capped reading), fetch (hops and checks), extract
(trafilatura off the event loop), searxng, executor (ToolBox).
"""

from __future__ import annotations

from fanout.tools.blocklist import load_blocked_domains
from fanout.tools.executor import ToolBox, ToolResult
from fanout.tools.schemas import TOOL_NAMES, TOOL_SCHEMAS

__all__ = ["TOOL_NAMES", "TOOL_SCHEMAS", "ToolBox", "ToolResult", "load_blocked_domains"]
