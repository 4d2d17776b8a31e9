"""``casekit validate PATH...``: static validation of case sources and records."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from casekit.cli.app import app, console, print_json, progress_bar
from casekit.errors import UsageError


@app.command()
def validate(
    paths: list[Path] = typer.Argument(..., help="Case sources (*.yaml), directories of them, "
                                       "or JSONL files of case records.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON report for machines."),
    gap_min: float = typer.Option(0.1, "--gap-min", help="Smallest relative L2 gap allowed between "
                                  "an agent-visible expression and the hidden solution."),
    summary_only: bool = typer.Option(False, "--summary", help="Print only the per-check counts."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Files checked in parallel processes."),
) -> None:
    """Check cases: schema, ids, family/domain consistency, expressions, boundary tags, grid,
    tolerances, forcing residual, boundary/initial data and leaks of the hidden solution.

    Exit status: 0 when clean, 1 when problems were found, 2 on usage errors.
    """
    from casekit.validate import validate_paths
    from casekit.validate.case_checks import Settings

    if not 0 < gap_min < 1:
        raise UsageError(f"--gap-min {gap_min} is out of range", valid="a number in (0, 1)")
    with progress_bar("validate") as advance:
        report = validate_paths(paths, Settings(gap_min=gap_min), jobs=max(1, jobs), progress=advance)
    if as_json:
        print_json({
            "files": report.files, "cases": report.cases, "failed_cases": report.failed_cases(),
            "problems": [p.to_dict() for p in report.problems],
            "by_check": {k: {"problems": n, "cases": c} for k, (n, c) in report.by_check().items()},
        })
    else:
        if not summary_only:
            for p in report.problems:
                console.print(p.render(), soft_wrap=True, markup=False)
        if report.problems:
            table = Table(title="problems by check", show_edge=False)
            table.add_column("check")
            table.add_column("problems", justify="right")
            table.add_column("cases", justify="right")
            for check, (n, c) in report.by_check().items():
                table.add_row(check, str(n), str(c))
            console.print(table)
        status = "clean" if report.ok else f"{len(report.problems)} problem(s) in {report.failed_cases()} case(s)"
        console.print(f"{report.cases} case(s) in {report.files} file(s): {status}", markup=False)
    raise typer.Exit(0 if report.ok else 1)
