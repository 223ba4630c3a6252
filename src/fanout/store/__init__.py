"""What a run directory holds, and how it is written so that nothing is lost or repeated.

checkpoint (the append-only log and its YAML views), log_index (what resume
needs from the log, saved beside it), manifest (what the run started with),
atomic (temp file + rename, and the YAML dumper every view uses), attempts
(the chat calls of verdicts in flight, and their settled cost once cut off),
layout (the files' names, and the check that keeps every output option off
them), run_lock (one process owns a run directory at a time).

The store keeps records as plain data: it imports nothing that knows a chat
reply, an edit, a tool or a strategy (the import contracts in pyproject.toml).
"""
