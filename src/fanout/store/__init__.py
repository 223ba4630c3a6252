"""What a run directory holds, and how it is written so that nothing is lost or repeated.

checkpoint (the append-only log and its YAML views), log_index (what resume
needs from the log, saved beside it), manifest (what the run started with),
edit_spool (the snapshot's edits on disk, read one at a time), atomic (temp
file + rename, and the YAML dumper every view uses), attempts (the chat calls
of verdicts in flight, and the cost of those cut off, settled on the next start),
layout (the files' names, and the check that keeps every output option off
them), run_lock (one process owns a run directory at a time).
"""
