"""No import inside a function in src/fanout unless it is lazy loading on purpose, named here with its reason (issue 31).

An import in a function hides a module's dependencies from its top; it is right only when the import is deferred
on purpose: a heavy library only some commands or some inputs need, an optional extra, or a cycle the layering
forbids breaking otherwise. Each such import is a (module, imported module) pair in LAZY_IMPORTS. The source is
read with the standard library's parser, not imported, so the check needs neither the package's dependencies nor
its import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "fanout"

AT_RUN = "the command's machinery is imported when it runs, so its --help and a bad flag answer without it"
REPORT = "the report (about 400 modules) is imported when the command runs, not for its --help or a bad flag"
RICH = "rich only when a terminal is there to draw on: a run logging to a file never loads it"
PDFIUM = "PDFium (pypdfium2) only in the extraction worker that reads a PDF, never in the run's process"

LAZY_IMPORTS: dict[tuple[str, str], str] = {
    ("cli/committee_options.py", "fanout.report"): REPORT,
    ("cli/compare.py", "fanout.engine.settings"): AT_RUN + " (the run settings whose keys change results)",
    ("cli/compare.py", "fanout.report"): REPORT,
    ("cli/compare.py", "fanout.report.compare_view"): REPORT,
    ("cli/queue.py", "fanout.report"): REPORT,
    ("cli/queue.py", "fanout.report.queue_view"): REPORT,
    ("cli/report.py", "fanout.report"): REPORT,
    ("cli/progress_display.py", "rich.console"): RICH,
    ("cli/progress_display.py", "rich.live"): RICH,
    ("cli/progress_display.py", "rich.table"): RICH,
    ("cli/progress_display.py", "rich.text"): RICH,
    ("cli/status.py", "fanout.workloads.patrol.live.state"): "a watch's state only for a watched run",
    ("cli/watch.py", "anyio"): AT_RUN,
    ("cli/watch.py", "fanout.cli.progress_display"): AT_RUN + " (the engine's progress)",
    ("cli/watch.py", "fanout.engine.intake"): AT_RUN + " (the engine's admission limits)",
    ("cli/watch.py", "fanout.engine.live"): AT_RUN + " (the engine run on a live source)",
    ("cli/watch.py", "fanout.engine.options"): AT_RUN,
    ("cli/watch.py", "fanout.engine.runner"): AT_RUN + " (the engine: anyio's streams, the orchestrator)",
    ("cli/watch.py", "fanout.store.layout"): AT_RUN,
    ("cli/watch.py", "fanout.workloads"): AT_RUN + " (the workload registry)",
    ("cli/watch.py", "fanout.workloads.patrol.live.clients"): AT_RUN + " (the stream and Lift Wing clients)",
    ("cli/watch.py", "fanout.workloads.patrol.live.state"): AT_RUN,
    ("workloads/patrol/live/clients.py", "fanout.tools"): "the web tools (providers, cache) only when enrichment "
                                                         "fetches an edit's references",
    ("cli/run.py", "fanout.cli.progress_display"): AT_RUN + " (the engine's progress and orchestrator)",
    ("cli/run.py", "fanout.engine.runner"): AT_RUN + " (the engine: anyio's streams, the orchestrator)",
    ("cli/run.py", "fanout.report.gate"): "the report only for --gate; a run without it never loads the report",
    ("cli/run.py", "fanout.report.router_accuracy"): "the report only for --router-accuracy",
    ("cli/sim.py", "fanout.sim"): "the simulator (aiohttp's server, its worlds) only when `fanout sim` runs",
    ("cli/tool.py", "fanout.tools"): AT_RUN + " (the toolbox: cache, providers, download)",
    ("http/client.py", "fanout.http.transport"): "aiohttp's import is a quarter second; tests pass their own transport",
    ("store/outputs.py", "fanout.store.manifest"): "every command loads the writer at start (fanout.cli.outputs); "
                                                   "the manifest only a command that reads a run",
    ("tools/extract.py", "trafilatura"): "trafilatura (lxml) only in the extraction worker that reads a page",
    ("tools/extract_worker.py", "pypdfium2"): "loaded before the worker's memory limit; an install without it "
                                              "still reads HTML",
    ("tools/pdf.py", "pypdfium2"): PDFIUM,
    ("tools/providers/duckduckgo.py", "ddgs"): "an optional extra (fanout[ddgs]): imported only when a search runs",
    ("tools/settings.py", "fanout.tools.urlguard"): "the guard (httpx) only when search endpoints are set",
    ("wikidata/fetch_edits.py", "fanout.tools"): "the toolbox (providers, cache) only for an enriching fetch",
    ("workloads/settings.py", "fanout.workloads"): "a cycle: the registry imports these settings",
}


def imports_in_functions(source: str) -> set[str]:
    """The modules imported inside a function or method of `source` (nested ones too), as written."""
    found: set[str] = set()
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    found.add("." * node.level + (node.module or ""))
    return found


def test_every_import_inside_a_function_is_named_with_its_reason() -> None:
    found = {(path.relative_to(PACKAGE).as_posix(), module)
             for path in sorted(PACKAGE.rglob("*.py"))
             for module in imports_in_functions(path.read_text(encoding="utf-8"))}
    unnamed = sorted(found - LAZY_IMPORTS.keys())
    assert unnamed == [], "move these imports to the top of the module, or name each in LAZY_IMPORTS with its reason"
    assert sorted(LAZY_IMPORTS.keys() - found) == [], "no longer imported inside a function: remove from LAZY_IMPORTS"


def test_imports_are_found_in_methods_and_nested_functions_but_not_at_the_top() -> None:
    source = (
        "import os\n"
        "def outer():\n"
        "    import json\n"
        "    def inner():\n"
        "        from .sibling import name\n"
        "class Box:\n"
        "    async def open(self):\n"
        "        from a.b import c, d\n"
    )
    assert imports_in_functions(source) == {"json", ".sibling", "a.b"}
