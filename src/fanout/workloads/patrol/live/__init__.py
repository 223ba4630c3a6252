"""`fanout watch`'s source: Wikidata's edits as they happen, judged by the same engine as a snapshot's (fanout.engine.live)."""
