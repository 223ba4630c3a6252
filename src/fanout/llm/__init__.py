"""Talking to an OpenAI-compatible endpoint: chat calls, per-model limits, the model catalog.

chat (one logical chat call: the model's limiter, retries, JSON mode's
fallback, cost), endpoint (the one door requests go through, a POST on the
run's client; its failures become ProviderError there), reply (a completion's
JSON read into a ChatResult, errors in 200 bodies included), limits (per-model pacing and the
gate a 429 closes), catalog (the endpoint's model listing and key checked
before a run spends money), cost (where a cost figure came from, and tokens
priced when the endpoint reports none), caching (which models get prompt-cache
breakpoints, and where).
"""
