"""Talking to an OpenAI-compatible endpoint: chat calls, per-model limits, the model catalog.

chat (one chat call: retries, errors in 200 bodies, cost), limits (per-model
pacing and the gate a 429 closes), catalog (the endpoint's model listing and
key checked before a run spends money).
"""
