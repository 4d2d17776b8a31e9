"""``casekit evaluate``, ``casekit calibrate-timing`` and ``casekit baselines``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import typer

from casekit.cli.app import (
    EXECUTOR_HELP,
    NAMES,
    SCHEDULER_HELP,
    Output,
    app,
    console,
    console_err,
    executor_options,
    jobs_option,
    json_option,
    listing_names,
    print_json,
)
from casekit.cli.output import table
from casekit.cli.progress import Display
from casekit.errors import UnknownName, UsageError
from casekit.scoring.gates import STAGES


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
    jobs: int = jobs_option(1, "Cases evaluated concurrently."),
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
    only: list[str] = typer.Option([], "--only", help="Evaluate only this case (descriptive or public id; repeat "
                                   "for several). Not a benchmark score: that covers every case and counts one "
                                   "without a submission as a failure, as the default does."),
    only_submitted: bool = typer.Option(False, "--only-submitted", help="Evaluate only the cases some "
                                        "--submissions directory holds (with --only: those too). Not a benchmark "
                                        "score, as --only."),
    as_json: bool = json_option("the verdicts"),
) -> None:
    """Run each submission isolated (no network, limits, only the agent view visible), check every
    run's artifacts, and apply the staged gates: F-Exec -> F-Acc -> F-Time -> Pass."""
    from casekit.evaluate.run import EvalOptions, Work, ran
    from casekit.evaluate.run import evaluate as run_evaluate
    from casekit.runner.base import RUNNERS

    if (cases is None) == (release is None):
        raise UsageError("name the cases to evaluate against: one of --cases and --release",
                         valid="--cases BUILD_OR_DATASET, or --release releases/<name>/<version>")
    if repeats < 1:
        raise UsageError("--repeats must be at least 1")
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
                       prompt_variant=prompt_variant, only=tuple(only), only_submitted=only_submitted)
    with Display("evaluate", console_err, unit="cases", part_unit="attempts", order=STAGE_ORDER) as display:
        def planned(work: Work) -> None:
            display.say(planned_line(work, track, out / "verdicts.jsonl"))
            display.start(work.cases, work.attempts, work=work.runs)

        try:
            verdicts = run_evaluate(opts, planned=planned, warn=display.say,
                                    done=lambda vs: display.advance([v["stage"] for v in vs], parts=len(vs),
                                                                    line=case_line(vs), work=sum(map(ran, vs))))
        except KeyboardInterrupt:
            display.stop()
            console_err.print(f"interrupted: the verdicts finished so far are in {out / 'verdicts.jsonl'}; run the "
                              "same command again to resume", markup=False)
            raise typer.Exit(130) from None
    if as_json:
        print_json(verdicts)
        return
    listed = len(verdicts) <= LISTED_VERDICTS
    console.print(verdict_table(verdicts) if listed else verdict_summary(verdicts))
    passed = sum(v["passed"] for v in verdicts)
    where = f"verdicts in {out / 'verdicts.jsonl'}" if listed else \
        f"every verdict in {out / 'verdicts.jsonl'} (casekit report {out}; --json prints them)"
    console.print(f"{passed}/{len(verdicts)} passed; {where}", markup=False, highlight=False)


def planned_line(work: Any, track: str, journal: Path) -> str:
    """What an evaluation is about to do: cases and attempts, how many of them run (the others
    never do: no submission), how many verdicts are resumed, and a restriction to some cases."""
    runs = f" ({work.runs} of them run; {work.attempts - work.runs} have no submission that can)" \
        if work.runs < work.attempts else ""
    resumed = f"; {work.resumed} verdict(s) resumed from {journal}" if work.resumed else ""
    line = f"evaluating {work.cases} case(s), {work.attempts} attempt(s){runs} on {track}{resumed}"
    if work.covered < work.of:
        line += (f"; restricted to {work.covered} of the {work.of} cases: not a benchmark score, which counts "
                 "every case")
    return line


#: verdicts printed one per line; more are summarised by system and family (all are in the journal)
LISTED_VERDICTS = 40


def verdict_summary(verdicts: list[dict[str, Any]]) -> object:
    """The verdicts counted by system and family, by stage, with how many attempts never ran (no
    submission): bounded by the registries, never by the cases."""
    from casekit.evaluate.run import ran

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for v in verdicts:
        groups.setdefault((v["system"], str(v.get("family", ""))), []).append(v)
    columns = ["system", "family", "verdicts", *STAGE_ORDER, "not run"]
    rows = []
    for (system, family), vs in sorted(groups.items()):
        stages = Counter(v["stage"] for v in vs)
        rows.append([system, family, str(len(vs)), *(str(stages[s]) for s in STAGE_ORDER),
                     str(sum(not ran(v) for v in vs))])
    return table(f"verdicts ({len(verdicts)}) by system and family", columns, rows, ids=("system", "family"),
                 right=columns[2:])


def verdict_table(verdicts: list[dict]) -> object:  # type: ignore[type-arg]
    """The verdicts as a table whose case ids (and system names) are never cut; one system is
    named in the title instead of a column."""
    systems = sorted({v["system"] for v in verdicts})
    columns = ["system"] * (len(systems) > 1) + ["case", "attempt", "stage", "error", "tau_acc", "runtime [s]",
                                                  "t/t_cal", "failure"]
    rows = []
    for v in verdicts:
        ratio = (v.get("timing") or {}).get("ratio")
        rows.append([v["system"]] * (len(systems) > 1) + [
            v["case_id"], str(v["attempt"]), v["stage"], f"{v['error']:.2e}" if v["error"] is not None else "",
            f"{v['tau_acc']:.2e}", f"{v['runtime']['median']:.3f}" if v["runtime"] else "",
            f"{ratio:.2f}" if ratio is not None else "", (v["failure"] or {}).get("message", "")[:80]])
    title = f"verdicts ({len(verdicts)})" + (f" of {systems[0]}" if len(systems) == 1 else "")
    return table(title, columns, rows, ids=("system", "case"))


#: the stages in the order a progress display counts them: passes first, then the gates in order
STAGE_ORDER = ("Pass", *(s for s in STAGES if s != "Pass"))
#: attempts named one by one in a case's progress line; more are counted by stage
NAMED_ATTEMPTS = 4


def case_line(verdicts: list[dict[str, Any]]) -> str:
    """One case's verdicts for the progress display: ``case: system Pass, other F-Acc`` (the
    attempt number when a system made several; counts by stage when there are many)."""
    if not verdicts:
        return ""
    several = len({v["system"] for v in verdicts}) < len(verdicts)
    if len(verdicts) > NAMED_ATTEMPTS:
        counts = Counter(v["stage"] for v in verdicts)
        what = ", ".join(f"{counts[s]} {s}" for s in STAGE_ORDER if counts[s])
    else:
        what = ", ".join(f"{v['system']}{'#' + str(v['attempt']) if several else ''} {v['stage']}" for v in verdicts)
    return f"{verdicts[0]['case_id']}: {what}"


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
    track: str = typer.Option("dolfinx", "--track", "-t", help="The track whose calibration solvers are timed."),
    out: Path = typer.Option(Path("timing.json"), "--out", help="The timing table to write."),
    repeats: int = typer.Option(5, "--repeats", help="Timed runs per case (median)."),
    as_json: bool = json_option("the timing table"),
) -> None:
    """Re-time every case's calibration solver on this machine, for absolute runtime thresholds
    on your hardware (``casekit evaluate --timing file --timing-file OUT``)."""
    from casekit.evaluate.calibrate import calibrate_timing as run
    from casekit.evaluate.store import open_store

    timed = run(open_store(cases, track), track, out, repeats=repeats,
                progress=lambda case, t: console_err.print(f"{case}: {t:.3f} s", markup=False))
    shown = Output(as_json)
    shown.say(f"{len(timed['cases'])} case(s) timed on this machine; table in {out}")
    shown.result({"out": str(out), **timed})


def _baseline_kinds() -> tuple[str, ...]:
    from casekit.evaluate.baselines import KINDS

    return KINDS


@app.command(cls=listing_names(kind=_baseline_kinds))
def baselines(
    cases: Path = typer.Option(..., "--cases", help="A build directory, a packaged dataset or a release."),
    subset: str = typer.Option("", "--set", help="A further set of cases of the dataset or release (authored: "
                               "its configurations authored_*), as casekit evaluate --set takes it; default: its "
                               "main set."),
    out: Path = typer.Option(Path("baselines"), "--out", help="Writes OUT/<kind>/<case_id>/solver.py."),
    kind: list[str] = typer.Option([], "--kind", help=f"A baseline: {NAMES} (repeat for several; default: all)."),
    track: str = typer.Option("dolfinx", "--track", "-t", help="The track the submissions are written for."),
    as_json: bool = json_option("the submission directories written"),
) -> None:
    """Write baseline submission directories: the calibration solvers and every inverter of the
    battery, ready for ``casekit evaluate --submissions OUT/<kind>``; a kind that gets no case
    (it applies to none, or the track takes no Python) writes nothing and says why."""
    from casekit.evaluate.baselines import KINDS, write_baselines
    from casekit.evaluate.store import open_store
    from casekit.tracks import TRACKS

    for k in kind:
        if k not in KINDS:
            raise UnknownName(f"unknown baseline {k!r}", valid=", ".join(KINDS))
    store = open_store(cases, track, subset)
    counts = write_baselines(store, out, tuple(kind) or KINDS, track)
    language = TRACKS.get(track).language
    shown = Output(as_json)
    written: dict[str, dict[str, Any]] = {}
    not_written: dict[str, str] = {}
    for k, n in counts.items():
        if n:
            written[k] = {"directory": str(out / k), "cases": n}
            shown.say(f"{out / k}: {n} submission(s)")
            continue
        if k != "calibration" and language != "python":
            not_written[k] = f"the inverters are Python submissions and the {track} track takes {language}"
        else:
            not_written[k] = f"applies to none of the {len(store.records)} case(s)"
        shown.say(f"{k}: {not_written[k]}; nothing written")
    shown.result({"out": str(out), "track": track, "set": subset, "cases": len(store.records),
                  "submissions": written, "not_written": not_written})
