"""Writing the HTML report: the first page, and one page per edit in a folder beside it.

    report.html              the first page (tables, charts, a row per edit)
    report/edits/<rcid>.html each edit's page, with the models' whole investigations

The folder is named after the page (`out.html` -> `out/edits/`), so two
reports written side by side keep their edit pages apart. Links between the
pages are relative: the page and its folder can be moved or shared together.
Each file is written to a temporary name and renamed, edit pages first, so a
reader never meets half a page or a first page whose links lead nowhere.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from fanout.report.first_page import render_html
from fanout.report.edit_pages import render_edit_pages
from fanout.report.document import Report
from fanout.store.outputs import fsync_folder, write_atomic

EDITS_DIR = "edits"


def edit_pages_dir(page: Path) -> Path:
    """Where the edit pages of the first page `page` go: a folder named after it, `edits/` inside."""
    stem = page.stem if page.suffix else f"{page.name}_files"
    return page.parent / stem / EDITS_DIR


def write_html_report(report: Report, page: Path) -> list[Path]:
    """Write the edit pages, then the first page; every file written, the first page first."""
    folder = edit_pages_dir(page)
    back = quote(f"../../{page.name}")
    written = [write_report_file(folder / f"{rcid}.html", text, sync_folder=False)
               for rcid, text in render_edit_pages(report, back)]
    fsync_folder(folder)  # once for all the edit pages (a 500-edit report spent seconds on one per page)
    relative = quote(f"{folder.parent.name}/{EDITS_DIR}")
    return [write_report_file(page, render_html(report, relative)), *written]


def write_report_file(path: Path, text: str, *, sync_folder: bool = True) -> Path:
    """Through the output writer's atomic write (fanout.store.outputs: temp file, fsync, rename), so a reader
    never sees half a page; the command has checked the page and its folder before (Outputs.check)."""
    return write_atomic(path, "--html", text, sync_folder=sync_folder)
