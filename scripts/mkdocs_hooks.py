"""MkDocs hooks: the manual's tables that are made from the code, rendered when the manual is built.

A page holds a marker (an HTML comment) where a table goes; `make docs` puts
the table there, so it is as current as the declarations it is made from
(fanout.base.declare), and a new setting needs no edit of the manual.
"""

from __future__ import annotations

from typing import Any

from fanout.base.declare import environment_table, option_table
from fanout.base.validate import package_data
from fanout.engine.settings import RunSettings
from fanout.workloads.settings import WORKLOAD, WorkloadSettings
from fanout.judging.policy import Thresholds


def prompt(name: str) -> str:
    """A prompt file of the package, shown as it is (the docs show what the models are told)."""
    return "```markdown\n" + package_data(name).read_text(encoding="utf-8").rstrip("\n") + "\n```\n"


TABLES = {
    "<!-- table: fanout run options -->": lambda: option_table(RunSettings, RunSettings.GROUPS),
    "<!-- table: fanout run environment -->": lambda: environment_table(RunSettings),
    "<!-- table: workload options -->": lambda: option_table(WorkloadSettings, (WORKLOAD,)),
    "<!-- prompt: claims -->": lambda: prompt("claims_prompt.md"),
    "<!-- prompt: claims extraction -->": lambda: prompt("claims_extraction_prompt.md"),
    "<!-- table: fanout report environment -->": lambda: environment_table(Thresholds),
}


def render_tables(markdown: str) -> str:
    """`markdown` with each marker replaced by its table."""
    for marker, table in TABLES.items():
        if marker in markdown:
            markdown = markdown.replace(marker, table())
    return markdown


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return render_tables(markdown)
