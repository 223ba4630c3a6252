"""The simulated models: what OpenRouter would list for them, and their habits.

Prices and context windows are the real ones of seed 000's four models, so a
demo's cost column looks like a real run's. The habits (how many searches,
what they fetch, which way their verdicts lean) are what give a comparison
report real disagreements to show; they are parameters, not intelligence.

Two habits give `--samples` something to fix: Olmo answers with whatever
label the verdict request lists first 20 % of the time (a planted position
bias, which only the swap of label orders outvotes), and Haiku samples at
temperature: half of its uncertain choices (its leaning, its slip, its
misreading of a page) are redrawn for each verdict request, so a majority of
samples leans towards its most probable answer while any one answer is as
likely to be wrong as before. Half, because nothing says how much of a real
model's doubt is chance and how much a habit that repeats in every sample.
The noise sits with Haiku because its sceptical leaning is its main source of
error and takes a verified reading to another stance with chance 0.1 or 0.2,
which a majority outvotes (from plausible it is 0.65, which a majority makes
worse). The other two have neither, so a demo's verdicts stay close to the
models' stated leanings and replay sample for sample.

Each states a confidence with its verdict (fanout.sim.confidence), with its
calibration planted: DeepSeek's is calibrated (it expects the accuracy it
has, about 0.9 on the sample), Nemotron's is overconfident (the same
expectation, stated as calibrated ** 0.25: a 0.5 comes out 0.84), Olmo's
mildly so, and Haiku's calibrated to a lower expectation of itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from fanout.sim.cache_terms import ANTHROPIC_HAIKU_4_5, DEEPSEEK, NO_CACHE, CacheTerms

Bias = Literal["careful", "credulous", "sceptical", "snippets"]


@dataclass(frozen=True)
class SimModel:
    """One simulated model, as listed by /api/v1/models and as it behaves."""

    id: str
    """The name OpenRouter lists as `id`."""
    canonical_slug: str
    """The dated name responses report in `model`."""
    name: str
    context_length: int
    input_price: float
    """USD per million prompt tokens."""
    output_price: float
    """USD per million completion tokens."""
    provider: str
    """Upstream provider named in responses, as OpenRouter does."""
    bias: Bias
    """careful: reads and judges fairly; credulous: says verified too readily;
    sceptical: downgrades good evidence; snippets: judges from search snippets
    and sometimes claims it read pages it never fetched."""
    error_rate: float
    """Chance that a verdict slips one step along the verdict scale."""
    searches: tuple[int, ...]
    """Number of searches to draw from (uniformly)."""
    fetches: tuple[int, ...]
    """Number of pages to fetch to draw from (uniformly)."""
    early_stop: float
    """Chance of stopping after the first search (and at most one fetch)."""
    parallel_calls: float
    """Chance of asking for two fetches in one turn."""
    query_styles: tuple[str, ...]
    """Query templates: {label} {prop} {value} {qid} {desc}."""
    tool_call_prefix: str
    """How this provider spells tool-call ids (`call_`, `toolu_`...)."""
    fences_without_json_mode: bool
    """Wraps its JSON verdict in a markdown fence when response_format is not sent."""
    cache: CacheTerms = NO_CACHE
    """How its provider caches prompts and bills cached tokens (fanout.sim.prompt_cache)."""
    label_position_bias: float = 0.0
    """Chance of answering with the FIRST label the verdict request lists instead of its own verdict.
    Drawn once per (edit, label listed first): asking again with the same label first gets the same
    pull, so only another order (fanout.research.swap) can outvote it."""
    temperature_noise: float = 0.0
    """Share of its random habits (misreadings, leaning, slip, first-label pull) that each verdict
    request redraws: 0 meets the conversation's draws in every sample, 1 redraws every habit per
    sample. Redrawn from the request's text: a repeat of the same request gets the same answer, a
    sample with its evidence or labels in another order can get another. A habit fires with the
    same probability either way, so one sample's odds of being right do not depend on it (fanout
    sends no temperature, so every request is sampled at the provider's default)."""
    expected_accuracy: float = 0.7
    """The accuracy the model expects of itself: the mean of the confidence it states (fanout.sim.confidence).
    Where it matches the model's measured accuracy, its stated confidence is calibrated."""
    overconfidence: float = 1.0
    """How far its stated confidence runs above the calibrated one: stated = calibrated ** (1 / this); 1 is
    calibrated, 3 states 0.79 where 0.5 would be right."""
    extract_merge: float = 0.0
    """Splitting a text into claims (fanout.sim.claims): chance that two neighbouring claims come out as one."""
    extract_miss: float = 0.0
    """Chance that a claim of the text is left out."""
    extract_pronoun: float = 0.0
    """Chance that a claim keeps the text's pronoun for its subject ("It was completed in 1889"), where the text has one."""

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0) -> float:
        """USD for a request; cached and written tokens are part of prompt_tokens, billed at the cache's ratios."""
        uncached = prompt_tokens - cached_tokens - cache_write_tokens
        prompt_usd = uncached * self.input_price + cached_tokens * self.input_price * self.cache.read_ratio
        prompt_usd += cache_write_tokens * self.input_price * self.cache.write_ratio
        usd = (prompt_usd + completion_tokens * self.output_price) / 1e6
        return round(usd, 12)

    def cache_prices(self) -> dict[str, str]:
        """The listing's cache prices, as OpenRouter lists them for a model whose provider caches."""
        if self.cache.mode == "none":
            return {}
        prices = {"input_cache_read": per_token(self.input_price * self.cache.read_ratio)}
        if self.cache.mode == "explicit":
            prices["input_cache_write"] = per_token(self.input_price * self.cache.write_ratio)
        return prices

    def listing(self) -> dict[str, object]:
        """This model as an entry of OpenRouter's /api/v1/models `data`."""
        return {
            "id": self.id,
            "canonical_slug": self.canonical_slug,
            "hugging_face_id": "",
            "name": self.name,
            "created": 1760000000,
            "description": f"{self.name}, simulated by fanout sim (a stand-in for tests and demos, not a model).",
            "context_length": self.context_length,
            "architecture": {
                "modality": "text->text",
                "input_modalities": ["text"],
                "output_modalities": ["text"],
                "tokenizer": "Other",
                "instruct_type": None,
            },
            "pricing": {
                "prompt": per_token(self.input_price),
                "completion": per_token(self.output_price),
                "request": "0",
                "image": "0",
                "web_search": "0",
                "internal_reasoning": "0",
                **self.cache_prices(),
            },
            "top_provider": {
                "context_length": self.context_length,
                "max_completion_tokens": 16384,
                "is_moderated": self.id.startswith("anthropic/"),
            },
            "per_request_limits": None,
            "supported_parameters": [
                "max_tokens",
                "temperature",
                "top_p",
                "stop",
                "seed",
                "tools",
                "tool_choice",
                "response_format",
                "structured_outputs",
            ],
        }


def per_token(per_million: float) -> str:
    """USD per token as OpenRouter writes it: a plain decimal string, never 5e-08."""
    text = f"{per_million / 1e6:.12f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def estimate_tokens(chars: int) -> int:
    """About four characters per token, as tokenizers average on English."""
    return max(1, math.ceil(chars / 4))


SIM_MODELS: tuple[SimModel, ...] = (
    SimModel(
        id="nvidia/nemotron-3-nano-30b-a3b",
        canonical_slug="nvidia/nemotron-3-nano-30b-a3b",
        name="NVIDIA: Nemotron 3 Nano 30B A3B",
        context_length=262_144,
        input_price=0.05,
        output_price=0.20,
        provider="DeepInfra",
        bias="credulous",
        error_rate=0.2,
        searches=(1, 1, 2),
        fetches=(1, 1, 2),
        early_stop=0.3,
        parallel_calls=0.0,
        query_styles=("{label} {prop}", "{label} {value}", "{label}"),
        tool_call_prefix="call_",
        fences_without_json_mode=True,
        label_position_bias=0.0,
        temperature_noise=0.0,
        expected_accuracy=0.9,
        overconfidence=4.0,
        extract_merge=0.15,
        extract_miss=0.08,
        extract_pronoun=0.4,
    ),
    SimModel(
        id="allenai/olmo-3.1-32b-instruct",
        canonical_slug="allenai/olmo-3.1-32b-instruct",
        name="AllenAI: Olmo 3.1 32B Instruct",
        context_length=65_536,
        input_price=0.20,
        output_price=0.60,
        provider="Parasail",
        bias="snippets",
        error_rate=0.15,
        searches=(1, 2, 2, 3),
        fetches=(0, 0, 1),
        early_stop=0.2,
        parallel_calls=0.0,
        query_styles=("{label} {value}", "{label} {prop} {value}", "who is {label}"),
        tool_call_prefix="call_",
        fences_without_json_mode=True,
        label_position_bias=0.2,
        temperature_noise=0.0,
        expected_accuracy=0.8,
        overconfidence=2.0,
        extract_merge=0.1,
        extract_miss=0.1,
        extract_pronoun=0.5,
    ),
    SimModel(
        id="deepseek/deepseek-v3.2",
        canonical_slug="deepseek/deepseek-v3.2",
        name="DeepSeek: DeepSeek V3.2",
        context_length=163_840,
        input_price=0.26,
        output_price=0.38,
        provider="DeepSeek",
        bias="careful",
        error_rate=0.15,
        searches=(1, 2, 2, 3),
        fetches=(1, 2, 2),
        early_stop=0.1,
        parallel_calls=0.3,
        query_styles=('"{label}" {prop}', "{label} {prop} {value} source", "{label} {desc}"),
        tool_call_prefix="call_0_",
        fences_without_json_mode=False,
        cache=DEEPSEEK,
        label_position_bias=0.0,
        temperature_noise=0.0,
        expected_accuracy=0.9,
        overconfidence=1.0,
        extract_merge=0.05,
        extract_miss=0.03,
        extract_pronoun=0.1,
    ),
    SimModel(
        id="anthropic/claude-haiku-4.5",
        canonical_slug="anthropic/claude-4.5-haiku-20251001",
        name="Anthropic: Claude Haiku 4.5",
        context_length=200_000,
        input_price=1.00,
        output_price=5.00,
        provider="Anthropic",
        bias="sceptical",
        error_rate=0.1,
        searches=(2, 2, 3),
        fetches=(1, 2),
        early_stop=0.05,
        parallel_calls=0.5,
        query_styles=("{label} {prop}", '"{label}" {value}', "{label} {desc} {prop} official record"),
        tool_call_prefix="toolu_vrtx_01",
        fences_without_json_mode=False,
        cache=ANTHROPIC_HAIKU_4_5,
        label_position_bias=0.0,
        temperature_noise=0.5,
        expected_accuracy=0.8,
        overconfidence=1.0,
        extract_merge=0.03,
        extract_miss=0.02,
        extract_pronoun=0.05,
    ),
)


def find_model(models: tuple[SimModel, ...], name: str) -> SimModel | None:
    """The model a request names, by `id` or `canonical_slug` as OpenRouter accepts."""
    for model in models:
        if name in (model.id, model.canonical_slug):
            return model
    return None
