"""The review desk: `fanout review RUN_DIR` serves a run's human queue in the browser on 127.0.0.1.

    desk     what the desk shows: the edits in working order, one edit in full (from the report)
    guard    only the desk's own Host and Origin; its Content-Security-Policy on every answer
    app      the aiohttp application: the page (Jinja2 templates/), static/ files, the JSON API
    server   serving it on 127.0.0.1 until stopped (only fanout.cli starts it)
    export   the decisions that stand, as a --labels file

Decisions are kept by fanout.store.reviews (RUN_DIR/reviews.jsonl), which
the report reads by itself; nothing below this layer imports the desk.
"""
