"""``casekit report``: tables, sensitivity, pass@k, plots and an HTML page from verdicts."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from casekit.cli.app import app, console
from casekit.errors import UsageError


@app.command()
def report(
    verdicts: list[Path] = typer.Argument(..., help="verdicts.jsonl files (several systems side by side)."),
    html: Path | None = typer.Option(None, "--html", help="Write index.html and the PNG figures here."),
) -> None:
    """Pass rate and stage rates by track, family, math type and domain; failure stages; threshold
    sensitivity recomputed from stored errors and times; pass@k when there are several attempts."""
    from casekit import schema
    from casekit.jsonio import iter_jsonl
    from casekit.report.render import html_page, tables

    rows = []
    for path in verdicts:
        for lineno, v in iter_jsonl(path):
            problems = schema.validate(v, "verdict")
            if problems:
                raise UsageError(f"{path}:{lineno} is not a verdict record: {problems[0].render()}")
            rows.append(v)
    if not rows:
        raise UsageError("no verdicts to report on")
    for title, header, body in tables(rows):
        table = Table(title=title, show_edge=False, title_justify="left")
        for h in header:
            table.add_column(h, justify="left" if h == header[0] else "right")
        for r in body:
            table.add_row(*r)
        console.print(table)
    if html is not None:
        page = html_page(rows, html, [str(p) for p in verdicts])
        console.print(f"wrote {page} and its figures")
