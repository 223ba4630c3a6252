"""fanout: one verification task across many LLMs at once, unattended and resumable.

What a Python user imports to run a whole run, or one verdict, from code:

    import anyio, fanout

    settings = fanout.RunSettings(models=(fanout.ModelSpec("deepseek/deepseek-v3.2"),))
    request = fanout.RunRequest(snapshot_path=Path("today.yaml"), run_dir=Path("runs/exp1"), settings=settings,
                                workload=fanout.get_workload())   # the default: SIFT-Patrol
    report = anyio.run(fanout.run, request)          # the same call resumes
    for record in fanout.read_records(Path("runs/exp1")):
        print(record.qid, record.model, record.verdict, record.cost_usd)

One verdict: `fanout.run_verdict(item, model, chat=..., tools=..., prompt=...)`
with a ChatClient and a ToolBox over one `make_http_client(...)` (see the
docs/development.md, "From Python"). Names are loaded on first use, so
`import fanout` stays cheap for the command line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fanout.base.version import __version__

_EXPORTS = {
    "run": "fanout.engine.runner",
    "run_sync": "fanout.engine.runner",
    "RunRequest": "fanout.engine.runner",
    "RunReport": "fanout.engine.runner",
    "RunSettings": "fanout.engine.settings",
    "ToolSettings": "fanout.tools.settings",
    "ModelSpec": "fanout.llm.models",
    "DEFAULT_MODELS": "fanout.llm.models",
    "get_workload": "fanout.workloads",
    "load_snapshot": "fanout.workloads.patrol.snapshot",
    "load_prompt": "fanout.workloads.patrol.prompt",
    "run_verdict": "fanout.research.verdict",
    "ChatClient": "fanout.llm.chat",
    "make_http_client": "fanout.http.client",
    "ToolBox": "fanout.tools",
    "open_run_toolbox": "fanout.tools",
    "VerdictRecord": "fanout.base.records",
    "read_records": "fanout.store.checkpoint",
    "FanoutError": "fanout.base.errors",
    "ConfigError": "fanout.base.errors",
    "ProviderError": "fanout.base.errors",
    "ToolFailure": "fanout.base.errors",
}
__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from fanout.engine.settings import RunSettings
    from fanout.llm.models import DEFAULT_MODELS, ModelSpec
    from fanout.tools.settings import ToolSettings
    from fanout.engine.runner import RunReport, RunRequest, run, run_sync
    from fanout.base.errors import ConfigError, FanoutError, ProviderError, ToolFailure
    from fanout.http.client import make_http_client
    from fanout.llm.chat import ChatClient
    from fanout.base.records import VerdictRecord
    from fanout.workloads import get_workload
    from fanout.workloads.patrol.prompt import load_prompt
    from fanout.workloads.patrol.snapshot import load_snapshot
    from fanout.research.verdict import run_verdict
    from fanout.store.checkpoint import read_records
    from fanout.tools import ToolBox, open_run_toolbox


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562), so `fanout status` does not pay for the engine's imports."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fanout' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
