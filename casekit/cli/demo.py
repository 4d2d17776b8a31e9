"""``casekit demo``: sample, build, package, evaluate and report, locally, in a few minutes."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from casekit.cli.app import app, console, jobs_option
from casekit.errors import UsageError


@app.command()
def demo(
    out: Path = typer.Option(Path("build/demo"), "--out", help="Directory for everything the demo writes "
                             "(under build/, which git ignores)."),
    jobs: int = jobs_option(2, "Concurrent builds and evaluations."),
) -> None:
    """Run the whole pipeline on a small sample of cases with the local DOLFINx track."""
    from casekit.demo import run
    from casekit.tracks import TRACKS

    ok, why = TRACKS.get("dolfinx").status()
    if not ok:
        raise UsageError(f"the DOLFINx track is not usable here: {why}", valid="bin/setup installs it")

    def table(t: tuple[str, list[str], list[list[str]]]) -> None:
        title, header, rows = t
        tab = Table(title=title, show_edge=False, title_justify="left")
        for h in header:
            tab.add_column(h)
        for r in rows:
            tab.add_row(*r)
        console.print(tab)

    result = run(out, jobs, lambda s: console.print(s, markup=False), table)
    console.print(f"demo done: {result['built']}/{result['cases']} cases built, dataset "
                  f"{'verified' if result['verified'] else 'NOT verified'}; see {out}/report/index.html")
    raise typer.Exit(0 if result["verified"] and result["built"] == result["cases"] else 1)
