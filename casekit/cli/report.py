"""``casekit report``: tables, sensitivity, pass@k, plots and an HTML page from verdicts."""

from __future__ import annotations

from pathlib import Path

import typer

from casekit.cli.app import app, console_err, json_option, print_json
from casekit.cli.output import print_tables
from casekit.errors import UsageError


@app.command()
def report(
    verdicts: list[Path] = typer.Argument(..., help="verdicts.jsonl files or evaluation directories holding one "
                                          "(several systems side by side; each file once; a system evaluated on "
                                          "the same track in two files is reported apart, named by its path)."),
    html: Path | None = typer.Option(None, "--html", help="Write the report as a web page: a path ending in .html "
                                     "is the page, one file with its figures inlined; any other path is a directory "
                                     "that gets index.html and the PNG figures."),
    as_json: bool = json_option("the report's data"),
) -> None:
    """Pass rates by track, family, math type and domain with systems side by side (n and Wilson
    95 % intervals); stages and failure categories; threshold sensitivity recomputed from stored
    errors and times; pass@k when there are several attempts."""
    from casekit.report.render import html_page, report_data, tables
    from casekit.report.sources import read_verdicts, verdict_files

    files = verdict_files(verdicts)
    rows, notes = read_verdicts(files)
    for note in notes:
        console_err.print(note, markup=False, highlight=False)
    if not rows:
        raise UsageError("no verdicts to report on", valid="the verdicts.jsonl of an evaluation")
    data = report_data(rows, [str(p) for p in files])
    if as_json:
        print_json(data)
    else:
        print_tables(tables(data))
    if html is not None:
        page = html_page(rows, html, [str(p) for p in files])
        console_err.print(f"wrote {page}" + ("" if page == html else " and its figures"),
                          markup=False)
