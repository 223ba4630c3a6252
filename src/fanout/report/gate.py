"""`fanout run --gate THRESHOLD`: seed 004's quality gate and quarantine, for a run of the claims workload.

After the run, each text's committee factuality (the share of its claims
the committee, or a reviewer, supports; fanout.report.builders_claims) is
held against the threshold. A text fails when it is below it, and also (the
gate fails closed) when it cannot be scored: not split into claims yet, or
a claim of it without a committee stance (--max-cost stopped the run, every
model failed on it). A text split into no claim at all has nothing to refute
and passes. Failing texts are written, with their refuted and unsure claims,
each with its evidence and sources, to the run's quarantine.json (the file
is written on every gated run, with an empty list when all pass, so a
pipeline always reads the current verdict), and the command exits 1.

Why on `fanout run` rather than `fanout report`: a pipeline step wants one
command whose exit code is the answer (seed 004's `quality_gate` sits in the
pipeline's evaluate step). The gate reads the run's own files only, so a
resumed run gates again over everything it holds; `fanout report` stays the
reader that writes nothing into the run directory.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fanout.base.errors import ConfigError
from fanout.base.records import utc_now
from fanout.report.build import build_report
from fanout.report.claims_rows import COMMITTEE, ClaimRow, FactualityRow
from fanout.report.document import ReportOptions
from fanout.store.atomic import write_atomically
from fanout.store.layout import QUARANTINE_NAME
from fanout.store.manifest import load_manifest
from fanout.workloads import get_workload
from fanout.workloads.claims.source import ClaimsSource
from fanout.workloads.claims.texts import Text


@dataclass(frozen=True)
class GateResult:
    threshold: float
    texts: int
    quarantined: list[dict[str, Any]]
    path: Path

    @property
    def passed(self) -> bool:
        return not self.quarantined

    def summary(self) -> str:
        """One line for the run's last words."""
        passing = self.texts - len(self.quarantined)
        head = f"Gate {self.threshold:g}: {passing} of {self.texts} text(s) pass"
        if self.passed:
            return f"{head}. Quarantine (empty): {self.path}"
        shown = ", ".join(f"{q['text_id']} ({q['reason']})" for q in self.quarantined[:5])
        more = f" and {len(self.quarantined) - 5} more" if len(self.quarantined) > 5 else ""
        return f"{head}; quarantined: {shown}{more}. See {self.path}"


def gate_run(run_dir: Path, threshold: float) -> GateResult:
    """Gate every text of the run's input, write the quarantine file, and say what passed."""
    manifest = load_manifest(run_dir)
    if manifest is None:
        raise ConfigError(f"{run_dir} has no manifest: nothing to gate")
    with get_workload(manifest.workload).open(Path(manifest.snapshot_path), cache_dir=run_dir) as source:
        if not isinstance(source, ClaimsSource):
            raise ConfigError(f"--gate scores the texts of a claims run; {run_dir} is a {manifest.workload} run")
        missing = {text.id for text in source.missing}
        texts = source.texts
        split = {text.id: len(source.claims_of(text)) for text in texts if text.id not in missing}
    scored, claims = _committee(run_dir)
    quarantined = [entry for text in texts
                   if (entry := _verdict(text, split, scored.get(text.id), claims.get(text.id, []), threshold))]
    path = run_dir / QUARANTINE_NAME
    document = {"gate": threshold, "run_dir": str(run_dir), "generated_at": utc_now(), "texts": len(texts),
                "passed": len(texts) - len(quarantined), "quarantined": quarantined}
    write_atomically(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return GateResult(threshold, len(texts), quarantined, path)


def _committee(run_dir: Path) -> tuple[dict[str, FactualityRow], dict[str, list[ClaimRow]]]:
    """Each text's committee row and its claims' committee rows; none before any verdict is logged."""
    try:
        report = build_report(run_dir, ReportOptions(resamples=0))  # the gate reads no agreement interval
    except ConfigError:
        return {}, {}
    rows = {r.text_id: r for r in report.tables["factuality"].rows if r.subject == COMMITTEE}
    claims: dict[str, list[ClaimRow]] = {}
    for row in report.tables["claim_verdicts"].rows:
        if row.subject == COMMITTEE:
            claims.setdefault(row.text_id, []).append(row)
    return rows, claims


def _verdict(text: Text, split: dict[str, int], row: FactualityRow | None, claims: Sequence[ClaimRow],
             threshold: float) -> dict[str, Any] | None:
    """The text's quarantine entry, or None when it passes."""
    reason = _reason(text, split, row, threshold)
    if reason is None:
        return None
    entry: dict[str, Any] = {"text_id": text.id, "reason": reason, "source_url": text.source_url,
                             "question": text.question, "text": text.text}
    if row is not None:
        entry |= {"overall_factuality": row.overall_factuality,
                  "overall_factuality_interval": [row.overall_factuality_low, row.overall_factuality_high],
                  "claims": row.claims, "judged": row.judged, "supported": row.supported, "refuted": row.refuted,
                  "unsure": row.unsure, "explanation": row.explanation}
    entry["refuted_claims"] = [_claim(c) for c in claims if c.stance == "reject"]
    entry["unsure_claims"] = [_claim(c) for c in claims if c.stance in ("unsure", None)]
    return entry


def _reason(text: Text, split: dict[str, int], row: FactualityRow | None, threshold: float) -> str | None:
    if text.id not in split:
        return "not split into claims yet"
    if split[text.id] == 0:
        return None  # no verifiable claim: nothing to refute
    if row is None or row.judged < split[text.id]:
        judged = row.judged if row is not None else 0
        return f"{split[text.id] - judged} of {split[text.id]} claims without a committee stance"
    if row.overall_factuality is None or row.overall_factuality < threshold:
        return f"factuality {row.overall_factuality or 0:.2f} below {threshold:g}"
    return None


def _claim(row: ClaimRow) -> dict[str, Any]:
    return {"claim_key": row.claim_key, "claim": row.claim, "stance": row.stance, "confidence": row.confidence,
            "evidence": list(row.evidence_list), "sources": list(row.source_list)}
