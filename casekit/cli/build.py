"""``casekit build``: calibrate cases with a track's solvers (cached and resumable)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from casekit.cli.app import EXECUTOR_HELP, SCHEDULER_HELP, app, console, console_err, executor_options, print_json
from casekit.errors import UsageError

if TYPE_CHECKING:
    from casekit.build.pipeline import CaseOutcome


@app.command()
def build(
    paths: list[Path] = typer.Argument(None, help="Case sources or directories (default: cases/)."),
    track: str = typer.Option("dolfinx", "--track", "-t", help="Track whose solvers calibrate the cases."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Cases built concurrently (timed runs never overlap)."),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", help="Where stage outputs and records go."),
    repeats: int = typer.Option(3, "--repeats", help="Timed calibration runs, each from a fresh state (median)."),
    timeout: float = typer.Option(600.0, "--timeout", help="Wall-clock limit of one solve, seconds."),
    memory_mb: int = typer.Option(4096, "--memory-mb", help="Memory limit of one solve (processes and scratch)."),
    runner: str = typer.Option("local", "--runner", help="local (bubblewrap sandbox), docker, podman or apptainer."),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    scheduler: str = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    prune: bool = typer.Option(False, "--prune", help="Drop the build directory's cases whose source files are "
                               "gone (or now declare another id)."),
    as_json: bool = typer.Option(False, "--json", help="Print the outcomes as JSON."),
) -> None:
    """Derive, validate, mesh, compute references, calibrate (e_base, t_base, thresholds) and
    trial-run each case; rejected cases are listed with their reasons.  The track's records.jsonl
    holds every case built in the build directory (a build of one source adds or updates it)."""
    from casekit.build.pipeline import BuildOptions
    from casekit.build.run import build as run_build
    from casekit.build.run import case_files
    from casekit.runner.limits import Limits
    from casekit.tracks import TRACKS

    paths = paths or [Path("cases")]
    for p in paths:
        if not p.exists():
            raise UsageError(f"{p} does not exist")
    if repeats < 1 or jobs < 1:
        raise UsageError("--repeats and --jobs must be at least 1")
    from casekit.runner.base import RUNNERS

    if runner not in RUNNERS:
        raise UsageError(f"unknown runner {runner!r}", valid=", ".join(RUNNERS.names()))
    usable, reason = RUNNERS.get(runner).available()
    if not usable:
        raise UsageError(f"the {runner} runner is not usable here: {reason}", valid="casekit env check")
    t = TRACKS.get(track)
    ok, why = t.status()
    if not ok:
        raise UsageError(f"track {track!r} is not usable here: {why}", valid="casekit env check")
    files = case_files(paths)
    opts = BuildOptions(build_dir, track, repeats, runner=runner,
                        limits=Limits(timeout_sec=timeout, memory_mb=memory_mb))
    with Progress(TextColumn("{task.description}", style="bold", markup=False), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[last]}", markup=False), console=console_err,
                  disable=not console_err.is_terminal) as progress:
        task = progress.add_task(f"build ({track})", total=len(files), last="")
        try:
            with _interrupt_on_sigterm():  # a cancelled job stops its workers and runs as Ctrl-C does
                outcomes = run_build(
                    paths, opts, jobs, executor=executor_options(executor, scheduler, jobs), prune=prune,
                    progress=lambda case, stage: progress.update(task, last=f"{case}: {stage}"),
                    done=lambda o: _done(progress, task, o, len(files)))
        except KeyboardInterrupt:
            progress.stop()
            console_err.print(f"interrupted: the cases that finished are in {build_dir / track / 'records.jsonl'}; "
                              "run the same command again to resume (finished stages are cached)")
            raise typer.Exit(130) from None
    if as_json:
        print_json([{"case_id": o.case_id, "status": "cached" if o.fully_cached else o.status, "reason": o.reason,
                     "family": o.family, "domain": o.domain, "e_base": o.e_base, "t_base": o.t_base}
                    for o in outcomes])
        raise typer.Exit(0 if all(o.status in ("built", "skipped") for o in outcomes) else 1)
    table = Table(title=f"casekit build --track {track}", show_edge=False)
    for col in ("case", "status", "e_base", "t_base [s]", "note"):
        table.add_column(col)
    for o in outcomes:
        status = "cached" if o.fully_cached else o.status
        colour = {"built": "green", "cached": "cyan", "rejected": "yellow", "failed": "red"}.get(status, "")
        table.add_row(o.case_id, Text(status, colour or ""),
                      f"{o.e_base:.2e}" if o.e_base is not None else "",
                      f"{o.t_base:.3f}" if o.t_base is not None else "", o.reason)
    console.print(table)
    counts: dict[str, int] = {}
    for o in outcomes:
        s = "cached" if o.fully_cached else o.status
        counts[s] = counts.get(s, 0) + 1
    records = build_dir / track / "records.jsonl"
    held = sum(1 for line in records.open() if line.strip()) if records.is_file() else 0
    console.print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
                  f"; {held} case(s) built in {build_dir} on {track}, records in {records}")
    raise typer.Exit(0 if all(o.status in ("built", "skipped") for o in outcomes) else 1)


def _done(progress: Progress, task: TaskID, o: CaseOutcome, total: int) -> None:
    """A finished case: the progress bar on a terminal; otherwise (a log file, CI) one line on
    stderr, so a long build shows where it is."""
    progress.update(task, advance=1, last=f"{o.case_id}: {o.status}")
    if not console_err.is_terminal:
        n = int(progress.tasks[0].completed)
        detail = (f"e_base {o.e_base:.2e}, t_base {o.t_base:.2f} s" if o.status == "built" and o.e_base is not None
                  and o.t_base is not None else o.reason[:200])
        status = "cached" if o.fully_cached else o.status
        console_err.print(f"[{n}/{total}] {o.case_id}: {status}" + (f" ({detail})" if detail else ""),
                          markup=False, highlight=False, soft_wrap=True)


@contextmanager
def _interrupt_on_sigterm() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the build runs (the caller's handler is restored:
    an in-process caller such as a test runner keeps its own)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: signals are the caller's business
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
