"""The one HTTP client a run shares (chat calls, SearXNG, web_fetch), and the transport under it."""
