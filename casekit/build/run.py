"""Building many cases: a pool of case pipelines, a progress display, the final table."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import shutil
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from casekit import executors
from casekit.build.cache import StageCache
from casekit.build.pipeline import BuildOptions, CaseBuild, CaseOutcome, collect_records
from casekit.errors import UsageError
from casekit.executors import ExecutorOptions
from casekit.jsonio import read_json, write_json, write_jsonl
from casekit.validate import SOURCE_SUFFIXES


def case_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.suffix in SOURCE_SUFFIXES))
        else:
            out.append(p)
    return out


#: a build directory's ``<track>/build-report.json``: each case's status and the reason of a rejected one
#: (``casekit build`` writes this run's cases, ``casekit dataset materialise`` every case it materialises)
BUILD_REPORT = "build-report.json"
#: one per process: a process's timed runs never overlap (a Dask worker is one process)
_TIMING_LOCK = threading.Lock()


class TimingLock:
    """A lock shared by every process (and thread) that opens the same file (``flock``): the
    worker processes of one build directory on this machine time their runs one at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = -1

    def __enter__(self) -> TimingLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:  # interrupted while waiting: closing the file releases any lock
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        fd, self._fd = self._fd, -1
        os.close(fd)  # closing the only descriptor of the open file releases the lock


def timing_lock_file(lock_dir: Path) -> Path:
    """The lock file of this host in a build directory: every worker of the build on one machine
    (local processes, Dask workers of a cluster or a LocalCluster) times its calibrations only
    while no other holds it; workers on other hosts time on their own machines."""
    return lock_dir / f".timing-{socket.gethostname()}.lock"


def build_case(item: tuple[Path, BuildOptions, Callable[[str, str], None] | None, Path | None]) -> CaseOutcome:
    """Build one case (runs on the executor's workers; writes under the build directory).  With a
    lock directory, timed runs wait for every process of this host holding its lock file (the
    workers of one build directory); without, for the other threads of this process."""
    path, opts, progress, lock_dir = item
    lock: AbstractContextManager[Any] = TimingLock(timing_lock_file(lock_dir)) if lock_dir else _TIMING_LOCK
    return CaseBuild(path, opts, lock, progress or (lambda case, stage: None)).run()


def build(paths: list[Path], opts: BuildOptions, jobs: int = 1,
          progress: Callable[[str, str], None] = lambda case, stage: None,
          done: Callable[[CaseOutcome], None] = lambda o: None,
          executor: ExecutorOptions | None = None, prune: bool = False) -> list[CaseOutcome]:
    """Build every case source under ``paths`` for one track, on ``executor`` (default: a local
    pool of ``jobs`` threads); writes ``<build>/<track>/records.jsonl`` (every case built in this
    build directory on the track, from this run and earlier ones: :func:`write_records`) and
    ``build-report.json`` (this run's cases).  Each case's products are written atomically by the
    case as it finishes, so a killed build resumes from its stage cache.  ``prune`` first drops
    the cases whose sources are gone."""
    files = case_files(paths)
    if not files:
        raise UsageError(f"no case sources under {', '.join(str(p) for p in paths)}",
                         valid="*.yaml case sources or directories holding them")
    StageCache(opts.build_dir).sweep()
    options = executor or ExecutorOptions(jobs=jobs)
    if opts.reference_memory_mb is None and options.kind == "local":
        opts = dataclasses.replace(opts, reference_memory_mb=reference_memory_mb(options.jobs))
    if options.kind == "local" and options.jobs > 1:
        # derivation and validation are Python: threads would share one interpreter lock
        options = dataclasses.replace(options, processes=True)
    runner = executors.make(options)
    # worker processes share a lock file per host: no calibration is timed while another worker on
    # the same machine times one (a shared file system holds one file per host)
    lock_dir = opts.build_dir if options.processes or options.kind == "dask" else None
    in_process = options.kind == "local" and not options.processes  # a callback cannot travel
    outcomes: list[CaseOutcome] = []

    def arrived(_: Any, o: CaseOutcome) -> None:
        outcomes.append(o)
        done(o)

    try:
        runner.run(build_case, [(f, opts, progress if in_process else None, lock_dir) for f in files], arrived)
    except KeyboardInterrupt:
        _write(opts, outcomes, prune)  # what finished; a rerun resumes from the stage cache
        raise
    _write(opts, outcomes, prune)
    return sorted(outcomes, key=lambda o: o.case_id)


#: the share of the machine's memory that the reference solves running side by side may take
REFERENCE_MEMORY_SHARE = 0.7


def reference_memory_mb(jobs: int) -> int | None:
    """The memory one reference solve may take when ``jobs`` cases build side by side: its share
    of :data:`REFERENCE_MEMORY_SHARE` of what the machine has available now (None where that
    cannot be read: the solve limit applies)."""
    from casekit.build.machine import available_memory_mb

    have = available_memory_mb()
    return None if have is None else int(have * REFERENCE_MEMORY_SHARE / max(jobs, 1))


def write_records(build_dir: Path, track: str, prune: bool = False,
                  built: dict[Path, str] | None = None) -> list[dict[str, Any]]:
    """``<build>/<track>/records.jsonl``: every case built in the build directory on the track (a
    build of one source adds or updates its case; a case rejected on rebuilding drops out).
    ``prune`` first removes the cases whose source file is gone or, per ``built`` (source ->
    the id it was just built as), now declares another id."""
    track_dir = build_dir / track
    if prune:
        built = {p.resolve(): cid for p, cid in (built or {}).items()}
        for status_file in sorted(track_dir.glob("*/status.json")):
            source = read_json(status_file).get("source")
            if not source:
                continue
            path = Path(source).resolve()
            if not path.is_file() or built.get(path, status_file.parent.name) != status_file.parent.name:
                shutil.rmtree(status_file.parent)
    records = collect_records(build_dir, track)
    write_jsonl(track_dir / "records.jsonl", records)
    return records


def _write(opts: BuildOptions, outcomes: list[CaseOutcome], prune: bool) -> None:
    outcomes = sorted(outcomes, key=lambda o: o.case_id)
    track_dir = opts.build_dir / opts.track
    write_records(opts.build_dir, opts.track, prune, {o.path: o.case_id for o in outcomes if o.status == "built"})
    write_json(track_dir / BUILD_REPORT, [
        {"case_id": o.case_id, "source": str(o.path), "status": o.status, "reason": o.reason,
         "family": o.family, "domain": o.domain, "e_base": o.e_base, "t_base": o.t_base,
         "cached": o.cached, "stage_seconds": o.stage_seconds, "solve_seconds": o.solve_seconds,
         "process_seconds": o.process_seconds}
        for o in outcomes])
