"""``casekit evaluate``: score a directory of submissions against built cases."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from casekit.cli.app import app, console
from casekit.errors import UsageError


@app.command()
def evaluate(
    cases: Path = typer.Option(..., "--cases", help="A build directory or a packaged dataset."),
    submissions: Path = typer.Option(..., "--submissions", help="DIR/<case_id>/solver.py (or "
                                     "DIR/<case_id>/attempt_<n>/solver.py)."),
    track: str = typer.Option("dolfinx", "--track", "-t", help="Track the submissions are written for."),
    out: Path = typer.Option(Path("evaluation"), "--out", help="Where verdicts.jsonl and artifacts go."),
    system: str = typer.Option("", "--system", help="Name of the system that wrote the submissions "
                               "(default: the directory name)."),
    repeats: int = typer.Option(3, "--repeats", help="Timed runs after the warm-up (median)."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Submissions run concurrently."),
    memory_mb: int = typer.Option(4096, "--memory-mb", help="Address-space limit of one run."),
) -> None:
    """Run each submission isolated (no network, limits, only the agent view visible), check its
    artifacts, and apply the staged gates: F-Exec -> F-Acc -> F-Time -> Pass."""
    from casekit.evaluate.run import EvalOptions
    from casekit.evaluate.run import evaluate as run_evaluate
    from casekit.evaluate.store import open_store

    if repeats < 1 or jobs < 1:
        raise UsageError("--repeats and --jobs must be at least 1")
    store = open_store(cases, track)
    opts = EvalOptions(store, submissions, out, track, system, repeats, jobs, memory_mb=memory_mb)
    verdicts = run_evaluate(opts, progress=lambda v: console.print(
        f"{v['case_id']} attempt {v['attempt']}: {v['stage']}", markup=False))
    table = Table(title=f"verdicts ({len(verdicts)})", show_edge=False)
    for col in ("case", "attempt", "stage", "error", "tau_acc", "runtime [s]", "tau_time [s]", "failure"):
        table.add_column(col)
    for v in verdicts:
        table.add_row(v["case_id"], str(v["attempt"]), v["stage"],
                      f"{v['error']:.2e}" if v["error"] is not None else "", f"{v['tau_acc']:.2e}",
                      f"{v['runtime']['median']:.3f}" if v["runtime"] else "", f"{v['tau_time']:.3f}",
                      (v["failure"] or {}).get("message", "")[:80])
    console.print(table)
    passed = sum(v["passed"] for v in verdicts)
    console.print(f"{passed}/{len(verdicts)} passed; verdicts in {out / 'verdicts.jsonl'}")


@app.command()
def baselines(
    cases: Path = typer.Option(..., "--cases", help="A build directory or a packaged dataset."),
    out: Path = typer.Option(Path("baselines"), "--out", help="Writes OUT/<kind>/<case_id>/solver.py."),
    kind: list[str] = typer.Option([], "--kind", help="calibration, zero, dirichlet_first, dirichlet_nearest, "
                                   "initial, forcing (default: all)."),
    track: str = typer.Option("dolfinx", "--track", "-t"),
) -> None:
    """Write baseline submission directories: the calibration solvers and the trivial cheaters,
    ready for ``casekit evaluate --submissions OUT/<kind>``."""
    from casekit.evaluate.baselines import KINDS, write_baselines
    from casekit.evaluate.store import open_store

    for k in kind:
        if k not in KINDS:
            raise UsageError(f"unknown baseline {k!r}", valid=", ".join(KINDS))
    counts = write_baselines(open_store(cases, track), out, tuple(kind) or KINDS, track)
    for k, n in counts.items():
        console.print(f"{out / k}: {n} submission(s)")
