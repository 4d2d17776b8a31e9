"""``casekit build``: calibrate cases with a track's solvers (cached and resumable)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from casekit.cli.app import (
    EXECUTOR_HELP,
    SCHEDULER_HELP,
    app,
    command_group,
    console,
    console_err,
    executor_options,
    jobs_option,
    json_option,
    print_json,
)
from casekit.cli.output import table
from casekit.cli.progress import Display
from casekit.cli.signals import interrupt_on_sigterm
from casekit.errors import UsageError

if TYPE_CHECKING:
    from casekit.build.pipeline import CaseOutcome


# options that `build` and `dataset build` share (one definition each)
TrackOption = Annotated[str, typer.Option("--track", "-t", help="Track whose solvers calibrate the cases.")]
JOBS_HELP = "Cases built concurrently (timed runs never overlap)."
TimeoutOption = Annotated[float, typer.Option(
    "--timeout", help="CPU-time limit of one solve, seconds (the same on a busy machine as on a quiet one); the "
    "wall clock stops a solve at 8 times that.")]
MemoryOption = Annotated[int, typer.Option(
    "--memory-mb", help="Memory limit of one solve (processes and scratch); a numerical reference's solves "
    "(casekit's own solver on finer levels) may take up to their share of 70 % of the machine's available memory "
    "when that is more.")]
RunnerOption = Annotated[str, typer.Option("--runner", help="local (bubblewrap sandbox), docker, podman or "
                                           "apptainer.")]
ExecutorOption = Annotated[str, typer.Option("--executor", help=EXECUTOR_HELP)]
SchedulerOption = Annotated[str | None, typer.Option("--scheduler", help=SCHEDULER_HELP)]


@app.command()
def build(
    paths: list[Path] = typer.Argument(None, help="Case sources or directories (default: cases/)."),
    track: TrackOption = "dolfinx",
    jobs: int = jobs_option(1, JOBS_HELP),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", help="Where stage outputs and records go."),
    repeats: int = typer.Option(3, "--repeats", help="Timed calibration runs, each from a fresh state (median)."),
    timeout: TimeoutOption = 600.0,
    memory_mb: MemoryOption = 4096,
    runner: RunnerOption = "local",
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
    prune: bool = typer.Option(False, "--prune", help="Drop the build directory's cases whose source files are "
                               "gone (or now declare another id)."),
    as_json: bool = json_option("the outcomes"),
) -> None:
    """Derive, validate, mesh, compute references, calibrate (e_base, t_base, thresholds) and
    trial-run each case; rejected cases are listed with their reasons.  The track's records.jsonl
    holds every case built in the build directory (a build of one source adds or updates it)."""
    from casekit.build.pipeline import BuildOptions
    from casekit.build.run import build as run_build
    from casekit.build.run import case_files

    paths = paths or [Path("cases")]
    _check_usable(paths, repeats, jobs, runner, track)
    files = case_files(paths)
    opts = BuildOptions(build_dir, track, repeats, runner=runner,
                        limits=BuildOptions.solve_limits(timeout, memory_mb))
    with Display(f"build ({track})", console_err, unit="cases") as display:
        display.start(len(files))
        try:
            with interrupt_on_sigterm():  # a cancelled job stops its workers and runs as Ctrl-C does
                outcomes = run_build(
                    paths, opts, jobs, executor=executor_options(executor, scheduler, jobs), prune=prune,
                    progress=lambda case, stage: display.note(f"{case}: {stage}"),
                    done=lambda o: _done(display, o))
        except KeyboardInterrupt:
            display.stop()
            console_err.print(f"interrupted: the cases that finished are in {build_dir / track / 'records.jsonl'}; "
                              "run the same command again to resume (finished stages are cached)")
            raise typer.Exit(130) from None
    if as_json:
        print_json([{"case_id": o.case_id, "status": "cached" if o.fully_cached else o.status, "reason": o.reason,
                     "family": o.family, "domain": o.domain, "e_base": o.e_base, "t_base": o.t_base}
                    for o in outcomes])
        raise typer.Exit(0 if all(o.status in ("built", "skipped") for o in outcomes) else 1)
    rows: list[list[str | Text]] = []
    for o in outcomes:
        status = "cached" if o.fully_cached else o.status
        colour = {"built": "green", "cached": "cyan", "rejected": "yellow", "failed": "red"}.get(status, "")
        rows.append([o.case_id, Text(status, colour or ""), f"{o.e_base:.2e}" if o.e_base is not None else "",
                     f"{o.t_base:.3f}" if o.t_base is not None else "", o.reason])
    console.print(table(f"casekit build --track {track}", ("case", "status", "e_base", "t_base [s]", "note"), rows,
                        ids=("case",)))
    counts: dict[str, int] = {}
    for o in outcomes:
        s = "cached" if o.fully_cached else o.status
        counts[s] = counts.get(s, 0) + 1
    records = build_dir / track / "records.jsonl"
    held = sum(1 for line in records.open() if line.strip()) if records.is_file() else 0
    console.print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
                  f"; {held} case(s) built in {build_dir} on {track}, records in {records}")
    raise typer.Exit(0 if all(o.status in ("built", "skipped") for o in outcomes) else 1)


def _check_usable(paths: list[Path], repeats: int, jobs: int, runner: str, track: str) -> None:
    """The sources exist, the counts are positive, the runner and the track are usable here."""
    from casekit.runner.base import RUNNERS
    from casekit.tracks import TRACKS

    for p in paths:
        if not p.exists():
            raise UsageError(f"{p} does not exist")
    if repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if runner not in RUNNERS:
        raise UsageError(f"unknown runner {runner!r}", valid=", ".join(RUNNERS.names()))
    usable, reason = RUNNERS.get(runner).available()
    if not usable:
        raise UsageError(f"the {runner} runner is not usable here: {reason}", valid="casekit env check")
    t = TRACKS.get(track)
    ok, why = t.status()
    if not ok:
        raise UsageError(f"track {track!r} is not usable here: {why}", valid="casekit env check")


def _done(display: Display, o: CaseOutcome, seconds: bool = False) -> None:
    """A finished case on the progress display (a line of its own when stderr is not a terminal:
    a log file, CI); ``seconds``: with the time its stages took."""
    detail = (f"e_base {o.e_base:.2e}, t_base {o.t_base:.2f} s" if o.status == "built" and o.e_base is not None
              and o.t_base is not None else o.reason[:200])
    status = "cached" if o.fully_cached else o.status
    took = f" ({sum(o.stage_seconds.values()):.1f} s)" if seconds else ""
    display.advance([status], line=f"{o.case_id}: {status}{took}" + (f" ({detail})" if detail else ""))


dataset_app = command_group("A dataset build whose progress lives in the repository: shards, their "
                          "committed records, packaging from them.")
app.add_typer(dataset_app, name="dataset")

AREA_HELP = "The dataset's committed build area (datasets/<name>/build): the progress, in the repository."


EXCLUDE_HELP = ("A directory or file of the sources to leave out (repeatable): cases --exclude cases/pdeagent-bench "
                "is the authored sample.")


def _sources(paths: list[Path], exclude: list[Path] | None = None) -> list:  # type: ignore[type-arg]
    """The dataset's sources, each one's key derived (once per casekit code: the machine's
    derivation cache) with a progress display -- after a code change, hundreds of sources take
    minutes, which the dataset commands otherwise spent in silence."""
    from casekit.build.shards import prime_keys, read_sources

    for p in [*paths, *(exclude or [])]:
        if not p.exists():
            raise UsageError(f"{p} does not exist")
    sources = read_sources(_without(paths, exclude or []))
    with Display("deriving sources", console_err, unit="sources", transient=True) as display:
        def progress(done: int, total: int) -> None:
            if done == 0:
                display.say(f"deriving {total} case source(s) once for this casekit code (kept in the machine's "
                            "derivation cache; CASEKIT_CACHE_DIR moves it)")
            display.update(done, total)

        prime_keys(sources, progress=progress)
    return sources


def _without(paths: list[Path], exclude: list[Path]) -> list[Path]:
    """``paths`` with the ``exclude`` paths left out (a directory holding one is replaced by its
    entries, so the others stay)."""
    gone = [e.resolve() for e in exclude]
    out: list[Path] = []
    for p in paths:
        r = p.resolve()
        if any(r == e or e in r.parents for e in gone):
            continue
        if p.is_dir() and any(r in e.parents for e in gone):
            out += _without(sorted(p.iterdir()), exclude)
        else:
            out.append(p)
    return out


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h"


@dataset_app.command("status")
def dataset_status(
    paths: list[Path] = typer.Argument(..., help="The dataset's case sources (directories or files)."),
    area: Path = typer.Option(..., "--area", help=AREA_HELP),
    exclude: list[Path] = typer.Option([], "--exclude", help=EXCLUDE_HELP),
    tracks: str = typer.Option("dolfinx", "--tracks", help="Comma-separated tracks (the first is primary)."),
    prune: bool = typer.Option(False, "--prune", help="Delete the committed entries of cases that are not among "
                               "the sources (an import that no longer releases them), on the tracks named: "
                               "the numbers and the release count only the sources' cases. Commit the deletion."),
    as_json: bool = json_option("the status"),
) -> None:
    """Every family (a shard) with its cases done in the repository and to build per track, the
    shards to run (a family projected past 60 minutes as slices) and the machine time: committed
    and projected for the rest.  A sample track (casekit.build.sample) counts the cases of its
    stratified sample, and is complete when they are done; its shards to run are the sample's.  A
    track whose environment is not usable here is listed as such (its keys need its library
    versions).  Exit 0 when the primary track is complete, else 1."""
    from casekit.build.shards import Area, TrackIdentity, status
    from casekit.tracks import TRACKS

    sources = _sources(paths, exclude)
    names = [t.strip() for t in tracks.split(",") if t.strip()]
    for t in names:
        if t not in TRACKS:
            raise UsageError(f"unknown track {t!r}", valid=", ".join(TRACKS.names()))
    idents, unusable = [], {}
    for t in names:
        ok, why = TRACKS.get(t).status()
        if ok:
            idents.append(TrackIdentity.of(t))
        else:
            unusable[t] = why
    st = status(Area(area), sources, idents)
    if prune:
        for t, ids in st.orphans.items():
            for case_id in ids:
                for f in Area(area).remove(t, case_id):
                    console.print(f"removed {f}", markup=False)
        st = status(Area(area), sources, idents)
    primary = names[0]
    if as_json:
        print_json({"tracks": names, "unusable": unusable, "complete": {t.name: st.complete(t.name) for t in idents},
                    "families": [{"family": r.family, "cases": r.cases,
                                  "tracks": {t: {"done": d, "to_build": n} for t, (d, n) in r.counts.items()},
                                  "shards": r.shards} for r in st.rows],
                    "machine": st.machine, "orphans": st.orphans, "samples": st.samples})
        raise typer.Exit(0 if st.complete(primary) else 1)
    table = Table(title=f"casekit dataset status ({area})", show_edge=False)
    table.add_column("shard (family)")
    table.add_column("cases", justify="right")
    for ident in idents:
        table.add_column(f"{ident.name} done / to build" + (" (sample)" if ident.name in st.samples else ""),
                         justify="right")
    table.add_column(f"to run ({primary})")
    for r in st.rows:
        table.add_row(r.family, str(r.cases), *(f"{r.counts[i.name][0]} / {r.counts[i.name][1]}" for i in idents),
                      " ".join(r.shards) if r.shards else ("done" if primary in st.machine else ""))
    console.print(table)
    for t, why in unusable.items():
        console.print(f"{t}: not usable here ({why}); casekit env install {t}", markup=False)
    for t, sm in st.samples.items():
        console.print(f"{t}: released on its stratified sample, {sm['cases']} case(s) covering the {sm['strata']} "
                      "(family, math type, domain) strata it supports; "
                      + (f"to run: --shard {' '.join(sm['shards'])}" if sm["shards"] else "the sample is complete"),
                      markup=False)
    for t, m in st.machine.items():
        console.print(f"{t}: {m['done']:.0f} case(s) done in the repository ({_hours(m['committed_seconds'])} of "
                      f"machine time), {m['to_build']:.0f} to build (projected {_hours(m['projected_seconds'])} at "
                      + (f"the committed cases' {m['seconds_per_case']:.1f} s per case" if m["measured"] else
                         f"an assumed {m['seconds_per_case']:.0f} s per case: nothing is committed yet") + "); "
                      f"the whole {'sample' if t in st.samples else 'set'} "
                      f"{_hours(m['committed_seconds'] + m['projected_seconds'])}", markup=False)
        if m["failed"]:
            console.print(f"{t}: {len(m['failed'])} case(s) done with a failed solve (left out of a release; "
                          "--retry-failed builds them again): " + ", ".join(m["failed"][:10]), markup=False)
        if st.orphans.get(t):
            console.print(f"{t}: {len(st.orphans[t])} committed case(s) not among the sources: "
                          + ", ".join(st.orphans[t][:10]), markup=False)
    raise typer.Exit(0 if st.complete(primary) else 1)


@dataset_app.command("build")
def dataset_build(
    paths: list[Path] = typer.Argument(..., help="The dataset's case sources (directories or files)."),
    shard: str = typer.Option(..., "--shard", help="A family (heat), a slice of one (poisson.2of3: every 3rd "
                              "sorted id from the 2nd), all, all.KofN, or the track's stratified sample (sample, "
                              "sample.KofN)."),
    area: Path = typer.Option(..., "--area", help=AREA_HELP),
    exclude: list[Path] = typer.Option([], "--exclude", help=EXCLUDE_HELP),
    track: TrackOption = "dolfinx",
    build_dir: Path = typer.Option(Path("build/dataset"), "--build-dir", help="The machine's build directory "
                                   "(stage cache; not committed)."),
    jobs: int = jobs_option(1, JOBS_HELP),
    repeats: int = typer.Option(1, "--repeats", help="Timed calibration runs (1: under the paired gate t_base is "
                                "metadata)."),
    timeout: TimeoutOption = 600.0,
    memory_mb: MemoryOption = 4096,
    runner: RunnerOption = "local",
    executor: ExecutorOption = "local",
    scheduler: SchedulerOption = None,
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Build again the cases whose committed "
                                      "solve failed (a rejected case stays done)."),
    as_json: bool = json_option("the shard's outcome"),
) -> None:
    """Build one shard: its cases whose committed record key (source, track solver code, library
    versions) matches are done; the rest are built in --build-dir and each one's record (or
    rejection, with its reason) is written into --area as it finishes.  Prints what to commit and
    the machine time (seconds per case, projection for the whole set).  Exit 0 when every case of
    the shard is in the area, 1 otherwise, 130 when interrupted (what finished is kept)."""
    from casekit.build.pipeline import BuildOptions
    from casekit.build.shards import Area, ShardSpec, TrackIdentity, build_shard, plan, status

    _check_usable(paths, repeats, jobs, runner, track)
    sources = _sources(paths, exclude)
    spec = ShardSpec.parse(shard, (s.family for s in sources))
    ident = TrackIdentity.of(track)
    committed_area = Area(area)
    opts = BuildOptions(build_dir, track, repeats, runner=runner, limits=BuildOptions.solve_limits(timeout, memory_mb))
    def announce(p: object) -> None:
        from casekit.build.shards import Plan

        assert isinstance(p, Plan)
        display.say(f"shard {p.shard} on {track}: {len(p.cases)} case(s); {p.summary()}")
        display.start(len(p.todo))

    with Display(f"dataset build ({track})", console_err, unit="cases") as display:
        try:
            with interrupt_on_sigterm():
                result = build_shard(committed_area, sources, spec, opts, jobs,
                                     executor=executor_options(executor, scheduler, jobs), retry_failed=retry_failed,
                                     announce=announce, progress=lambda case, stage: display.note(f"{case}: {stage}"),
                                     done=lambda o: _done(display, o, seconds=True), track=ident)
        except KeyboardInterrupt:
            display.stop()
            console_err.print(f"interrupted: the cases that finished are committed in {area / track}; run the same "
                              "command again to go on", markup=False)
            raise typer.Exit(130) from None
    now = TrackIdentity.of(track)  # the solver code as it is after the run
    after = plan(committed_area, sources, spec, now)
    # the whole set's projection counts the other shards' committed entries as done without deriving
    # their keys (every source of a dataset would take minutes); `dataset status` gives the exact count
    st = status(committed_area, sources, [now], keyed=False)
    m = st.machine[track]
    # the machine time of the cases built here: cases whose calibration came from this machine's stage
    # cache (an earlier run) cost next to nothing and would make the projection optimistic
    reused = [o for o in result.outcomes if "calibration" in o.cached]
    fresh = result.built - len(reused)
    fresh_seconds = max(result.seconds - sum(sum(o.stage_seconds.values()) for o in reused) / jobs, 0.0)
    per_case = fresh_seconds / fresh if fresh else None
    families = sorted({s.family for s in spec.select(sources, track)})
    to_commit = [str(area / track / f) for f in families]
    if as_json:
        print_json({"shard": spec.name, "track": track, "cases": len(result.plan.cases),
                    "done_before": len(result.plan.done), "built": result.built, "seconds": result.seconds,
                    "reused_stage_cache": len(result.outcomes) - fresh, "seconds_per_case": per_case,
                    "outcomes": [{"case_id": o.case_id, "status": o.status, "reason": o.reason}
                                 for o in result.outcomes],
                    "uncommitted": [{"case_id": c, "reason": r} for c, r in result.uncommitted],
                    "moved": result.moved, "to_build": [s.id for s in after.todo], "commit": to_commit,
                    "machine": m})
        raise typer.Exit(0 if not after.todo else 1)
    for o in result.outcomes:
        if o.status != "built":
            console.print(f"{o.case_id}: {o.status}: {o.reason}", markup=False)
    for cid, why in result.uncommitted:
        console.print(f"{cid}: {why}", markup=False)
    if result.moved:
        console.print(f"{len(result.moved)} case(s) were built with the {track} solver code as edited during the run "
                      "and are committed under it", markup=False)
    counts: dict[str, int] = {}
    for o in result.outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    console.print(f"shard {spec.name} on {track}: {len(result.plan.done)} were done in the repository; "
                  + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to build")
                  + (f"; {len(after.todo)} to build again (the solver code is not what they were built with, or they "
                     "were not committed)" if after.todo else "; the shard is complete")
                  + ("; failed solves stay done until their key changes (--retry-failed)"
                     if counts.get("failed") else ""), markup=False)
    if per_case is not None:
        rest = m["to_build"] * per_case
        console.print(f"machine time: {result.built} case(s) in {result.seconds:.0f} s"
                      + (f", {len(reused)} of them from this machine's stage cache" if reused else "")
                      + f"; {fresh} built here in {fresh_seconds:.0f} s ({per_case:.1f} s per case, --jobs {jobs}); "
                      f"{track}: {m['done']:.0f} case(s) done in the repository, "
                      f"{m['to_build']:.0f} to build (projected {_hours(rest)} at {per_case:.1f} s per case); the "
                      f"whole {'sample' if track in st.samples else 'set'} {_hours(m['committed_seconds'] + rest)}",
                      markup=False)
    if result.committed:
        console.print("commit: git add " + " ".join(to_commit), markup=False)
    raise typer.Exit(0 if not after.todo else 1)


@dataset_app.command("materialise")
def dataset_materialise(
    paths: list[Path] = typer.Argument(..., help="The dataset's case sources (directories or files)."),
    area: Path = typer.Option(..., "--area", help=AREA_HELP),
    exclude: list[Path] = typer.Option([], "--exclude", help=EXCLUDE_HELP),
    track: list[str] = typer.Option(["dolfinx"], "--track", "-t", help="Tracks to write (the first is primary)."),
    out: Path = typer.Option(..., "--out", help="The build directory to write (replaced whole)."),
) -> None:
    """Write the area's committed records as a build directory that casekit package reads
    (records.jsonl, record.json, calibration.npz, reference.npz per case; a manufactured reference
    is sampled again from its source).  A record counts when its source and the track's solver
    code are this checkout's, and its library versions too where the track is usable here.
    A sample track (casekit.build.sample) is written for the cases of its stratified sample.
    Writes the machine time of the build of what it writes (casekit.package.numbers.MACHINE_FILE:
    per track, the committed entries' build seconds) for the dataset card.
    Exit 1 when a case of the sources (of a sample track's sample) has no current record."""
    from casekit.build.shards import Area, TrackIdentity, materialise
    from casekit.jsonio import write_json
    from casekit.package.numbers import MACHINE_FILE, machine_time
    from casekit.tracks import TRACKS

    sources = _sources(paths, exclude)
    idents = {}
    for t in track:
        if t not in TRACKS:
            raise UsageError(f"unknown track {t!r}", valid=", ".join(TRACKS.names()))
        if TRACKS.get(t).status()[0]:
            idents[t] = TrackIdentity.of(t)
    reports = materialise(Area(area), sources, track, out, idents)
    machine = {}
    for r in reports:
        done = {*r.records, *(cid for cid, _ in r.rejected)}
        machine[r.track] = machine_time(e for cid, e in Area(area).entries(r.track).items() if cid in done)
    write_json(out / MACHINE_FILE, machine)
    for r in reports:
        console.print(f"{r.track}" + (" (its stratified sample)" if r.sample else "")
                      + f": {len(r.records)} record(s), {len(r.rejected)} rejected, {len(r.missing)} not built, "
                      f"{len(r.stale)} stale" + ("" if r.versions_checked else
                                                 " (library versions not checked: the track is not usable here)")
                      + (f"; not built: {', '.join(r.missing[:5])}" if r.missing else "")
                      + (f"; stale: {', '.join(r.stale[:5])}" if r.stale else ""), markup=False)
    console.print(f"wrote {out}; package it with casekit package {out} " + " ".join(f"--track {t}" for t in track),
                  markup=False)
    raise typer.Exit(0 if all(r.complete for r in reports) else 1)


@dataset_app.command("numbers")
def dataset_numbers(
    area: Path = typer.Option(..., "--area", help=AREA_HELP),
    tracks: str = typer.Option("", "--tracks", help="Comma-separated (default: every track of the area)."),
    as_json: bool = json_option("the numbers"),
) -> None:
    """The committed area's numbers beside the paper's (PDEAgent-Bench, arXiv 2605.09636, Appendix F):
    per family and track the cases built and their calibration (e_base median, 95th percentile and
    max; t_base median; the paper gives no t_base), and the build's machine time per track (the sum
    of the committed entries' build seconds, rejected cases included, and seconds per case).  Reads
    the committed entries as they are (casekit dataset status says which are stale); the dataset
    card carries the same tables for the packaged records."""
    from casekit.build.shards import Area
    from casekit.package import numbers

    if not area.is_dir():
        raise UsageError(f"{area} is not a directory", valid="a committed build area (datasets/<name>/build)")
    names = [t.strip() for t in tracks.split(",") if t.strip()] or sorted(p.name for p in area.iterdir() if p.is_dir())
    committed = {t: Area(area).entries(t) for t in names}
    by_track = {t: [e["record"] for e in es.values() if e.get("status") == "built" and e.get("record")]
                for t, es in committed.items()}
    machine = {t: numbers.machine_time(es.values()) for t, es in committed.items()}
    if as_json:
        print_json({"area": str(area), "paper": numbers.PAPER_SOURCE,
                    "families": [r.to_dict() for r in numbers.rows(by_track)], "machine": machine})
        return
    typer.echo(numbers.markdown(by_track, machine))
