"""``casekit validate PATH...``: static validation of case sources and records."""

from __future__ import annotations

from pathlib import Path

import typer

from casekit.cli.app import app, console, console_err, jobs_option, json_option, print_json
from casekit.cli.output import table
from casekit.cli.progress import Display
from casekit.errors import UsageError


@app.command()
def validate(
    paths: list[Path] = typer.Argument(..., help="Case sources (*.yaml), directories of them, "
                                       "or JSONL files of case records.", show_default=False),
    as_json: bool = json_option("the report"),
    gap_min: float = typer.Option(0.1, "--gap-min", help="Smallest relative L2 gap allowed between "
                                  "an agent-visible expression and the hidden solution."),
    summary_only: bool = typer.Option(False, "--summary", help="Print only the per-check counts."),
    jobs: int = jobs_option(1, "Files checked in parallel processes."),
    span_table: bool = typer.Option(False, "--span", help="Print every case's span residual: the relative L2 "
                                    "distance of its hidden output from the closest small span of agent-visible "
                                    "fields (casekit.validate.span), and that span."),
) -> None:
    """Check cases: schema, ids, family/domain consistency, expressions, boundary tags, grid,
    tolerances, forcing residual, boundary/initial data and leaks of the hidden solution: one
    expression at a time, a short combination of visible fields (the span residual, reported per
    case) and the inversion battery (no inverter may come near the answer).

    Exit status: 0 when clean, 1 when problems were found, 2 on usage errors.
    """
    from casekit.validate import validate_paths
    from casekit.validate.case_checks import Settings

    if not 0 < gap_min < 1:
        raise UsageError(f"--gap-min {gap_min} is out of range", valid="a number in (0, 1)")
    with Display("validate", console_err, unit="files", transient=True) as display:
        report = validate_paths(paths, Settings(gap_min=gap_min), jobs=jobs, progress=display.update)
    if as_json:
        print_json({
            "files": report.files, "cases": report.cases, "failed_cases": report.failed_cases(),
            "problems": [p.to_dict() for p in report.problems],
            "by_check": {k: {"problems": n, "cases": c} for k, (n, c) in report.by_check().items()},
            "cases_measured": [{"file": f, "id": case_id, **m} for (f, case_id), m in sorted(report.measures.items())],
        })
    else:
        if not summary_only:
            for p in report.problems:
                console.print(p.render(), soft_wrap=True, markup=False)
        if report.problems:
            console.print(table("problems by check", ("check", "problems", "cases"),
                                [(check, str(n), str(c)) for check, (n, c) in report.by_check().items()],
                                right=("problems", "cases")))
        _span_report(report, span_table)
        status = "clean" if report.ok else f"{len(report.problems)} problem(s) in {report.failed_cases()} case(s)"
        console.print(f"{report.cases} case(s) in {report.files} file(s): {status}", markup=False)
    raise typer.Exit(0 if report.ok else 1)


def _span_report(report: object, every_case: bool) -> None:
    """One line per case with ``--span``; always the smallest and the median residual."""
    import statistics

    fits = sorted(((m["span"]["residual"], case_id, m["span"]) for (_, case_id), m in
                   report.measures.items() if "span" in m), key=lambda r: r[0])  # type: ignore[attr-defined]
    if not fits:
        return
    if every_case:
        console.print(table("span residual per case (closest small span of visible fields)",
                            ("case", "residual", "span", "led by"),
                            [(case_id, f"{residual:.3g}", fit["span"], ", ".join(fit["leading"]))
                             for residual, case_id, fit in fits], ids=("case",)))
    median = statistics.median(r for r, _, _ in fits)
    console.print(f"span residual over {len(fits)} manufactured case(s): smallest {fits[0][0]:.3g} ({fits[0][1]}), "
                  f"median {median:.3g}", markup=False)
