"""``casekit evaluate``, ``casekit calibrate-timing`` and ``casekit baselines``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from casekit.cli.app import EXECUTOR_HELP, SCHEDULER_HELP, app, console, console_err, executor_options, print_json
from casekit.errors import UsageError


@app.command()
def evaluate(
    cases: Path = typer.Option(None, "--cases", help="A build directory or a packaged dataset."),
    release: Path = typer.Option(None, "--release", help="A release directory (releases/<name>/<version>), "
                                 "verified first; nothing needs to be built: records, thresholds and "
                                 "numerical references come from it, manufactured references are sampled "
                                 "from the hidden solutions at evaluation."),
    submissions: list[Path] = typer.Option(..., "--submissions", help="DIR/<case_id>/solver.py (or "
                                           "DIR/<case_id>/attempt_<n>/solver.py); repeat for several systems."),
    track: str = typer.Option("dolfinx", "--track", "-t", help="Track the submissions are written for."),
    subset: str = typer.Option("", "--set", help="A further set of cases of the dataset or release (authored: "
                               "its configurations authored_*); default: its main set."),
    out: Path = typer.Option(Path("evaluation"), "--out", help="Where verdicts.jsonl and artifacts go (an existing "
                             "one is resumed; other systems' verdicts are kept; a verdict whose case record "
                             "changed since is scored again)."),
    system: str = typer.Option("", "--system", help="Name of the system that wrote the submissions "
                               "(default: the directory name; only with one --submissions)."),
    repeats: int = typer.Option(3, "--repeats", help="Timed runs per attempt (median); every run is scored."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Cases evaluated concurrently."),
    memory_mb: int = typer.Option(4096, "--memory-mb", help="Memory limit of one run (processes and scratch)."),
    timing: str = typer.Option("paired", "--timing", help="paired: gate on t / t_calibration, the calibration "
                               "solver timed here beside the submissions; build: on the build's t_base; file: on "
                               "a casekit calibrate-timing table."),
    timing_file: Path = typer.Option(None, "--timing-file", help="The table for --timing file."),
    runner: str = typer.Option("local", "--runner", help="local (bubblewrap sandbox), docker, podman or "
                               "apptainer."),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    scheduler: str = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    convergence: str = typer.Option(None, "--convergence", help="Self-convergence diagnostic: run each attempt "
                                    "again with case_spec['resolution'] set to each of these cells-across values "
                                    "(e.g. 16,32) and report the observed order; never gates."),
    prompt_variant: str = typer.Option("standard", "--prompt-variant", help="The prompt variant the submissions "
                                       "were written from, recorded in every verdict and shown by casekit report: "
                                       "standard, or thresholds (casekit prompt --state-thresholds)."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdicts as JSON."),
) -> None:
    """Run each submission isolated (no network, limits, only the agent view visible), check every
    run's artifacts, and apply the staged gates: F-Exec -> F-Acc -> F-Time -> Pass."""
    from casekit.evaluate.run import EvalOptions
    from casekit.evaluate.run import evaluate as run_evaluate
    from casekit.runner.base import RUNNERS

    if (cases is None) == (release is None):
        raise UsageError("name the cases to evaluate against: one of --cases and --release",
                         valid="--cases BUILD_OR_DATASET, or --release releases/<name>/<version>")
    if repeats < 1 or jobs < 1:
        raise UsageError("--repeats and --jobs must be at least 1")
    resolutions: tuple[int, ...] = ()
    if convergence is not None:
        from casekit.evaluate.convergence import parse_resolutions

        try:
            resolutions = parse_resolutions(convergence)
        except ValueError as exc:
            raise UsageError(f"--convergence: {exc}", valid="e.g. --convergence 16,32") from None
    if runner not in RUNNERS:
        raise UsageError(f"unknown runner {runner!r}", valid=", ".join(RUNNERS.names()))
    usable, reason = RUNNERS.get(runner).available()
    if not usable:
        raise UsageError(f"the {runner} runner is not usable here: {reason}", valid="casekit env check")
    store = _store(cases, release, track, subset)
    opts = EvalOptions(store, submissions, out, track, system, repeats, jobs, runner=runner, memory_mb=memory_mb,
                       timing=timing, timing_file=timing_file,
                       executor=executor_options(executor, scheduler, jobs), convergence=resolutions,
                       prompt_variant=prompt_variant)
    try:
        verdicts = run_evaluate(opts, progress=lambda v: console_err.print(
            f"{v['system']} {v['case_id']} attempt {v['attempt']}: {v['stage']}", markup=False, highlight=False),
            warn=lambda message: console_err.print(message, markup=False, highlight=False))
    except KeyboardInterrupt:
        console_err.print(f"interrupted: the verdicts finished so far are in {out / 'verdicts.jsonl'}; run the same "
                          "command again to resume", markup=False)
        raise typer.Exit(130) from None
    if as_json:
        print_json(verdicts)
        return
    table = Table(title=f"verdicts ({len(verdicts)})", show_edge=False)
    for col in ("system", "case", "attempt", "stage", "error", "tau_acc", "runtime [s]", "t/t_cal", "failure"):
        table.add_column(col)
    for v in verdicts:
        ratio = (v.get("timing") or {}).get("ratio")
        table.add_row(Text(v["system"]), Text(v["case_id"]), str(v["attempt"]), v["stage"],
                      f"{v['error']:.2e}" if v["error"] is not None else "", f"{v['tau_acc']:.2e}",
                      f"{v['runtime']['median']:.3f}" if v["runtime"] else "",
                      f"{ratio:.2f}" if ratio is not None else "",
                      Text((v["failure"] or {}).get("message", "")[:80]))
    console.print(table)
    passed = sum(v["passed"] for v in verdicts)
    console.print(f"{passed}/{len(verdicts)} passed; verdicts in {out / 'verdicts.jsonl'}", markup=False)


def _store(cases: Path | None, release: Path | None, track: str, subset: str = ""):  # type: ignore[no-untyped-def]
    """The cases to evaluate against: a build or dataset (``--cases``), or a release
    (``--release``: verified first; says where its references come from and their size)."""
    from casekit.evaluate.store import open_release, open_store
    from casekit.tracks import TRACKS

    TRACKS.get(track)  # an unknown track name is refused with the valid ones
    if release is None:
        assert cases is not None
        return open_store(cases, track, subset)
    store = open_release(release, track, subset)
    sampled, shipped, size = store.shipped_references()
    manifest = store.manifest or {}
    console_err.print(f"release {manifest.get('name')} {manifest.get('version')} verified: {len(store.records)} "
                      f"case(s) on {track}; {sampled} manufactured reference(s) sampled from their solutions, "
                      f"{shipped} numerical reference(s) shipped compressed ({_size(size)})",
                      markup=False, highlight=False)
    return store


def _size(n: int) -> str:
    return f"{n} bytes" if n < 10_000 else f"{n / 1e3:.1f} kB" if n < 10_000_000 else f"{n / 1e6:.1f} MB"


@app.command("calibrate-timing")
def calibrate_timing(
    cases: Path = typer.Option(..., "--cases", help="A build directory or a packaged dataset."),
    track: str = typer.Option("dolfinx", "--track", "-t"),
    out: Path = typer.Option(Path("timing.json"), "--out", help="The timing table to write."),
    repeats: int = typer.Option(5, "--repeats", help="Timed runs per case (median)."),
) -> None:
    """Re-time every case's calibration solver on this machine, for absolute runtime thresholds
    on your hardware (``casekit evaluate --timing file --timing-file OUT``)."""
    from casekit.evaluate.calibrate import calibrate_timing as run
    from casekit.evaluate.store import open_store

    table = run(open_store(cases, track), track, out, repeats=repeats,
                progress=lambda case, t: console_err.print(f"{case}: {t:.3f} s", markup=False))
    console.print(f"{len(table['cases'])} case(s) timed on this machine; table in {out}", markup=False)


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
        console.print(f"{out / k}: {n} submission(s)", markup=False)
