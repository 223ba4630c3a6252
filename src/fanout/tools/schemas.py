"""The two tools as the model sees them: seed 000's JSON schemas, verbatim.

Every model gets exactly these, so no model is favoured by a richer tool.
"""

from __future__ import annotations

from typing import Any

TOOL_NAMES: tuple[str, ...] = ("web_search", "web_fetch")

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "web_search",
            "description": "Search the web for information. Returns titles, URLs, and snippets.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "Search query"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "web_fetch",
            "description": "Fetch and read the text content of a web page.",
            "parameters": {
                "type": "object",
                "properties": {"url": {"type": "string", "description": "URL to fetch"}},
                "required": ["url"],
            },
        },
    },
]

REQUIRED_ARGUMENT: dict[str, str] = {
    schema["function"]["name"]: schema["function"]["parameters"]["required"][0] for schema in TOOL_SCHEMAS
}
"""The one string argument each tool needs, for the dispatcher's checks."""
