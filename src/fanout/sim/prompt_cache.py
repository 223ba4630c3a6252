"""The simulated providers' prompt caches: what a request reads from cache and writes to it.

Each simulated model states its provider's terms (fanout.sim.cache_terms,
named in its profile in fanout.sim.models), after what OpenRouter documents
(openrouter.ai/docs/features/prompt-caching; see fanout.llm.caching):

- `explicit` (Anthropic): only prefixes that end at a `cache_control`
  breakpoint are cached. A request reads the longest prefix that ends at one
  of its breakpoints, or up to 20 messages before one (Anthropic's
  look-back), and that an earlier request of the same conversation wrote; it
  writes the prefixes at its breakpoints, and pays for the tokens from what it
  read up to its last breakpoint. Reads cost 0.1x input, writes 1.25x; a
  prefix shorter than the model's minimum (4 096 tokens for Claude Haiku 4.5)
  is never cached; an entry lives five minutes from its last use.
- `implicit` (DeepSeek): every request is cached as it is sent, with no
  marks; a request reads the longest prefix an earlier request of the same
  conversation sent, in whole 64-token units (DeepSeek's storage unit), at
  0.1x input ($0.028 against $0.28 in DeepSeek's price list); writes cost
  nothing extra and are not reported.
- `none`: the providers the other simulated models are served by (DeepInfra,
  Parasail) document no prompt caching for them.

A prefix is the tool definitions and tool_choice (Anthropic puts the tools
first, and a change of either invalidates the messages cached after them),
then whole messages, each hashed without its cache marks. Entries are kept
per conversation (the model and the edit the conversation is about), so two
conversations never share one; the least recently used conversations are
forgotten first and each keeps at most MAX_ENTRIES prefixes, so a long bench
holds a bounded amount of memory.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

from fanout.sim.cache_terms import CacheTerms
from fanout.sim.conversation import message_chars, message_text, tools_chars
from fanout.sim.models import estimate_tokens

LOOKBACK_MESSAGES = 20
MAX_CONVERSATIONS = 2048
MAX_ENTRIES = 48
TTL_S = 300.0


class CacheUse(NamedTuple):
    """Prompt tokens of one request read from the cache and written to it."""

    read: int = 0
    written: int = 0


class Boundary(NamedTuple):
    """The end of one message in a request: the hash of the prefix up to it, and its tokens."""

    digest: bytes
    tokens: int
    marked: bool


class PromptCache:
    """Cached prefixes per conversation; bounded (see the module's docstring)."""

    def __init__(self, clock: Callable[[], float], *, max_conversations: int = MAX_CONVERSATIONS,
                 max_entries: int = MAX_ENTRIES, ttl_s: float = TTL_S) -> None:
        self._clock = clock
        self._max_conversations = max_conversations
        self._max_entries = max_entries
        self._ttl_s = ttl_s
        self._entries: OrderedDict[tuple[str, str], OrderedDict[bytes, float]] = OrderedDict()
        """Per conversation, the prefixes cached and when each expires, least recently used first."""

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._entries.values())

    def use(self, terms: CacheTerms, conversation: tuple[str, str], body: dict[str, Any]) -> CacheUse:
        """Read and write this request's prefixes as the provider would; what it read and wrote."""
        if terms.mode == "none":
            return CacheUse()
        entries = self._conversation(conversation)
        bounds = boundaries(body)
        if terms.mode == "explicit":
            return self._explicit(terms, entries, bounds)
        return self._implicit(terms, entries, bounds)

    def _explicit(self, terms: CacheTerms, entries: OrderedDict[bytes, float], bounds: list[Boundary]) -> CacheUse:
        marks = [i for i, bound in enumerate(bounds) if bound.marked]
        read = max((self._read_before(entries, bounds, mark) for mark in marks), default=0)
        for mark in marks:
            if bounds[mark].tokens >= terms.min_tokens:
                self._keep(entries, bounds[mark].digest)
        top = max((bounds[m].tokens for m in marks if bounds[m].tokens >= terms.min_tokens), default=0)
        return CacheUse(read, max(top - read, 0))

    def _read_before(self, entries: OrderedDict[bytes, float], bounds: list[Boundary], mark: int) -> int:
        """Tokens of the longest cached prefix that ends at this breakpoint or within the look-back before it."""
        for index in range(mark, max(mark - LOOKBACK_MESSAGES, -1), -1):
            if self._hit(entries, bounds[index].digest):
                return bounds[index].tokens
        return 0

    def _implicit(self, terms: CacheTerms, entries: OrderedDict[bytes, float], bounds: list[Boundary]) -> CacheUse:
        hits = [bound.tokens for bound in bounds if self._hit(entries, bound.digest)]
        for bound in bounds:
            self._keep(entries, bound.digest)
        read = max(hits, default=0)
        return CacheUse(read - read % terms.unit_tokens, 0)

    def _hit(self, entries: OrderedDict[bytes, float], digest: bytes) -> bool:
        expires = entries.get(digest)
        if expires is None or expires <= self._clock():
            return False
        self._keep(entries, digest)  # a read refreshes the entry's lifetime, as Anthropic's does
        return True

    def _keep(self, entries: OrderedDict[bytes, float], digest: bytes) -> None:
        entries[digest] = self._clock() + self._ttl_s
        entries.move_to_end(digest)
        while len(entries) > self._max_entries:
            entries.popitem(last=False)

    def _conversation(self, key: tuple[str, str]) -> OrderedDict[bytes, float]:
        entries = self._entries.get(key)
        if entries is None:
            entries = self._entries[key] = OrderedDict()
            while len(self._entries) > self._max_conversations:
                self._entries.popitem(last=False)
        self._entries.move_to_end(key)
        return entries


def boundaries(body: dict[str, Any]) -> list[Boundary]:
    """Each message's end in the request: the prefix's hash (tools first, marks left out) and its tokens."""
    tools = {"tools": body.get("tools"), "tool_choice": body.get("tool_choice")}
    digest = hashlib.sha256(json.dumps(tools, sort_keys=True).encode()).digest()
    chars = tools_chars(body)
    bounds = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        digest = hashlib.sha256(digest + _unmarked(message)).digest()
        chars += message_chars(message)
        bounds.append(Boundary(digest, estimate_tokens(chars), _is_marked(message)))
    return bounds


def _unmarked(message: dict[str, Any]) -> bytes:
    """A message as the cache sees it: its content as text, whatever parts and marks carried it."""
    seen = {"role": message.get("role"), "text": message_text(message), "tool_calls": message.get("tool_calls"),
            "tool_call_id": message.get("tool_call_id")}
    return json.dumps(seen, sort_keys=True, ensure_ascii=False).encode()


def _is_marked(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("cache_control") for p in content)
