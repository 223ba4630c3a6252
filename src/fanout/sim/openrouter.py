"""Response bodies shaped exactly as OpenRouter's, so the real client code paths run.

Kept apart from the routes so the shapes can be read (and compared with
DESIGN.md's facts) in one place: completions with usage.cost, errors as
{"error": {"code", "message", "metadata"}}, an error inside a 200 body with
finish_reason "error", and the /generation record.
"""

from __future__ import annotations

import datetime as dt
import itertools
import secrets
import time
from typing import Any

from fanout.sim.investigation import Reply
from fanout.sim.models import SimModel
from fanout.sim.prompt_cache import CacheUse

_sequence = itertools.count(1)


def generation_id() -> str:
    """Unique per response, in OpenRouter's `gen-<unix time>-<20 characters>` form."""
    return f"gen-{int(time.time())}-{secrets.token_hex(6)}{next(_sequence):08d}"


def completion_body(
    gen_id: str, model: SimModel, reply: Reply, prompt_tokens: int, completion_tokens: int, cost: float,
    cache: CacheUse = CacheUse(),
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None, "reasoning": None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"index": i, "id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for i, c in enumerate(reply.tool_calls)
        ]
    return {
        "id": gen_id,
        "provider": model.provider,
        "model": model.canonical_slug,
        "object": "chat.completion",
        "created": int(time.time()),
        "choices": [
            {
                "logprobs": None,
                "finish_reason": reply.finish_reason,
                "native_finish_reason": _native_finish(reply.finish_reason, model),
                "index": 0,
                "message": message,
            }
        ],
        "system_fingerprint": None,
        "usage": usage(prompt_tokens, completion_tokens, cost, cache),
    }


def usage(prompt_tokens: int, completion_tokens: int, cost: float, cache: CacheUse = CacheUse()) -> dict[str, Any]:
    """OpenRouter's usage object; cached_tokens and cache_write_tokens are part of prompt_tokens."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "cost": cost,
        "is_byok": False,
        "prompt_tokens_details": {"cached_tokens": cache.read, "cache_write_tokens": cache.written, "audio_tokens": 0},
        "cost_details": {"upstream_inference_cost": None},
        "completion_tokens_details": {"reasoning_tokens": 0, "image_tokens": 0},
    }


def error_in_200_body(gen_id: str, model: SimModel, code: int) -> dict[str, Any]:
    """A provider failure OpenRouter reports inside a 200 response."""
    return {
        "id": gen_id,
        "provider": model.provider,
        "model": model.canonical_slug,
        "object": "chat.completion",
        "created": int(time.time()),
        "choices": [
            {
                "logprobs": None,
                "finish_reason": "error",
                "native_finish_reason": "error",
                "index": 0,
                "message": {"role": "assistant", "content": "", "refusal": None, "reasoning": None},
                "error": {
                    "code": code,
                    "message": f"Upstream error from {model.provider}: connection reset by peer",
                    "metadata": {"provider_name": model.provider, "raw": "connection reset by peer"},
                },
            }
        ],
        "usage": usage(0, 0, 0.0),
    }


def error_body(code: int, message: str, **metadata: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if metadata:
        error["metadata"] = metadata
    return {"error": error, "user_id": "user_sim"}


def generation_record(
    gen_id: str, model: SimModel, prompt_tokens: int, completion_tokens: int, cost: float, finish_reason: str,
    latency_s: float, cache: CacheUse = CacheUse(), cache_discount: float | None = None,
) -> dict[str, Any]:
    """The /generation record; cache_discount is what the cache saved (negative when writes cost more)."""
    return {
        "id": gen_id,
        "upstream_id": "chatcmpl-" + gen_id.rsplit("-", 1)[-1],
        "total_cost": cost,
        "cache_discount": cache_discount,
        "upstream_inference_cost": None,
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "model": model.canonical_slug,
        "app_id": None,
        "streamed": False,
        "cancelled": False,
        "provider_name": model.provider,
        "latency": int(latency_s * 1000),
        "moderation_latency": None,
        "generation_time": int(latency_s * 1000),
        "finish_reason": finish_reason,
        "native_finish_reason": finish_reason,
        "tokens_prompt": prompt_tokens,
        "tokens_completion": completion_tokens,
        # The provider's own tokenizer counts a little differently from OpenRouter's normalised one.
        "native_tokens_prompt": round(prompt_tokens * 1.07),
        "native_tokens_completion": round(completion_tokens * 1.07),
        "native_tokens_reasoning": 0,
        "native_tokens_cached": cache.read,
        "num_media_prompt": None,
        "num_media_completion": None,
        "num_search_results": None,
        "origin": "",
        "usage": cost,
        "is_byok": False,
    }


def _native_finish(finish_reason: str, model: SimModel) -> str:
    if model.provider == "Anthropic":
        return {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}.get(finish_reason, finish_reason)
    return finish_reason
