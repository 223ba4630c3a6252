"""The engine: which (edit, model) pair runs when, under which limits, and how a run starts and stops.

runner (a run as a library call: checks, clients, signals), orchestrator (the
schedule, the single writer, the two-press stop), progress (the live display
and `fanout status`'s table), loop_lag (an opt-in probe for `make bench`).
"""
