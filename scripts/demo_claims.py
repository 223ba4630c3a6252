"""`make demo-claims`: the claims workload offline, as a pipeline would drive it.

Twelve bundled texts (src/fanout/data/sample_texts.yaml) go through the real
`fanout` command against the simulator on 127.0.0.1: each text is split into
claims by the extractor, every claim is verified by the four default models
with SearXNG-, PubMed- and arXiv-style search, the report scores the claims
against the texts' own labels, and `--gate 0.85` holds back every text whose
committee factuality is below 0.85 in the run's quarantine.json (exit 1, as
a pipeline step would fail). The demo then shows the quarantine and the
report, and succeeds when all of that happened as it should.

    python scripts/demo_claims.py              the demo
    python scripts/demo_claims.py --gate 0.5  another threshold
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from fanout.base.validate import package_data

sys.path.insert(0, str(Path(__file__).resolve().parent))
from demo import fanout_cmd, new_run_dir, simulator  # noqa: E402  (the patrol demo's simulator and helpers)

TEXTS = package_data("sample_texts.yaml")
BANNER = (
    "fanout claims demo: twelve short texts are split into claims and every claim is checked by SIMULATED\n"
    "models served by `fanout sim` on 127.0.0.1, not by real LLMs. The texts' own labels score the result."
)


def search_config(base: str, path: Path) -> Path:
    """SearXNG, PubMed and arXiv stand-ins together: some claims are settled only by the literature."""
    config = {"providers": ["searxng", "pubmed", "arxiv"], "mode": "aggregate",
              "endpoints": {"pubmed": f"{base}/entrez/eutils/", "arxiv": f"{base}/api/query"},
              "provider_settings": {"pubmed": {"article_url": base + "/pubmed/{pmid}/", "request_gap": 0},
                                    "arxiv": {"request_gap": 0}}}
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def run_args(base: str, run_dir: Path, config: Path, gate: float) -> list[str]:
    return fanout_cmd("run", "--workload", "claims", str(TEXTS), "--run-dir", str(run_dir), "--base-url",
                      f"{base}/api/v1", "--searxng-url", base, "--allow-private-urls", "--fetch-delay", "0",
                      "--search-config", str(config), "--concurrency", "8", "--gate", f"{gate:g}")


def show_quarantine(run_dir: Path) -> int:
    """The quarantine as a pipeline reads it; the number of texts held back."""
    data = json.loads((run_dir / "quarantine.json").read_text(encoding="utf-8"))
    print(f"\nquarantine.json: {data['passed']} of {data['texts']} texts pass the gate {data['gate']:g}; held back:")
    for entry in data["quarantined"]:
        print(f"  {entry['text_id']}: {entry['reason']}")
        for claim in entry["refuted_claims"]:
            print(f"    refuted: {claim['claim']}")
    return len(data["quarantined"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gate", type=float, default=0.85, help="the gate (default 0.85, seed 004's example)")
    args = parser.parse_args()
    print(BANNER, flush=True)
    run_dir = new_run_dir("demo-claims")
    run_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, \
            simulator("demo", Path(scratch) / "edit-labels.yaml", latency_scale=0.2) as base:
        config = search_config(base, run_dir / "search.yaml")
        code = subprocess.call(run_args(base, run_dir, config, args.gate))
    if code not in (0, 1) or not (run_dir / "quarantine.json").exists():
        print(f"the claims run failed (exit {code})", file=sys.stderr)
        return code or 1
    held = show_quarantine(run_dir)
    if (code == 1) != (held > 0):
        print(f"the run exited {code} but the quarantine holds {held} text(s)", file=sys.stderr)
        return 1
    print(f"\nThe gate exited {code}: a pipeline step would {'stop here' if code else 'go on'}.\n", flush=True)
    report = subprocess.call(fanout_cmd("report", str(run_dir), "--html", str(run_dir / "report.html")))
    print(f"\nRun directory: {run_dir}   HTML report: {run_dir}/report.html   quarantine: {run_dir}/quarantine.json")
    return report


if __name__ == "__main__":
    sys.exit(main())
