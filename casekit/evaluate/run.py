"""``casekit evaluate``: run every submission of one or more systems against the built cases.

A submissions directory (one per system) holds one solver per case (``DIR/<case>/solver.py`` or
``solver.cpp``), or with attempts ``DIR/<case>/attempt_<n>/...``; ``<case>`` is the case's public
id (what agents see) or its descriptive id.  Every case of the dataset gets a verdict for every
system: a case without a submission is F-Exec ("no submission"), so skipping cases never raises
a pass rate.  Work is grouped by case -- all attempts of all systems with the case's calibration
solver timed beside them (paired timing) -- and verdicts are appended to the journal
``OUT/verdicts.jsonl`` as each case finishes: a killed evaluation keeps them and resumes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit import executors
from casekit.errors import CasekitError, UsageError
from casekit.evaluate.journal import Journal
from casekit.evaluate.pairing import Attempt, CaseBatch, evaluate_case
from casekit.evaluate.store import CaseStore
from casekit.executors import ExecutorOptions
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS

MAX_SUBMISSION_BYTES = 2 * 1024 * 1024
TIMING_MODES = ("paired", "build", "file")
ATTEMPT_DIR = re.compile(r"attempt_(\d{1,6})")


@dataclass
class EvalOptions:
    store: CaseStore
    #: one directory per system (a single path is one system)
    submissions: Path | Sequence[Path]
    out: Path
    track: str = "dolfinx"
    #: the system's name when there is one submissions directory (default: its directory name)
    system: str = ""
    repeats: int = 3
    jobs: int = 1
    runner: str = "local"
    memory_mb: int = 4096
    timing: str = "paired"
    #: ``casekit calibrate-timing`` output (timing == "file")
    timing_file: Path | None = None
    hide: tuple[Path, ...] = field(default_factory=tuple)
    #: where the case batches run (default: a local pool of ``jobs`` threads)
    executor: ExecutorOptions | None = None

    def systems(self) -> list[tuple[str, Path]]:
        dirs = [self.submissions] if isinstance(self.submissions, Path) else list(self.submissions)
        if not dirs:
            raise UsageError("no submissions directory was given", valid="--submissions DIR (one per system)")
        if self.system and len(dirs) > 1:
            raise UsageError("--system names one system; several submissions directories are named by their "
                             "directory names", valid="one --submissions with --system, or distinct directory names")
        out: list[tuple[str, Path]] = []
        for d in dirs:
            if not Path(d).is_dir():
                raise UsageError(f"{d} is not a directory of submissions", valid="DIR/<case id>/solver.py")
            name = self.system or Path(d).resolve().name
            if any(name == n for n, _ in out):
                raise UsageError(f"two submissions directories are both named {name!r}",
                                 valid="distinct directory names (the system names)")
            if not any(p.is_dir() for p in Path(d).iterdir()):
                raise UsageError(f"{d} holds no submissions", valid="DIR/<case id>/solver.py (one directory per case)")
            out.append((name, Path(d)))
        return out


def attempts_of(case_dir: Path) -> list[tuple[int, Path]]:
    """The attempts in a case directory: ``attempt_<n>`` directories, or the directory itself as
    attempt 1.  Two directories for the same attempt number (attempt_1, attempt_01) or a mix of
    both layouts is a usage error."""
    numbered: dict[int, Path] = {}
    for p in sorted(case_dir.iterdir()):
        m = ATTEMPT_DIR.fullmatch(p.name)
        if not (p.is_dir() and m):
            continue
        n = int(m.group(1))
        if n < 1:
            raise UsageError(f"{p}: attempts are numbered from 1", valid="attempt_1, attempt_2, ...")
        if n in numbered:
            raise UsageError(f"{numbered[n]} and {p} are both attempt {n}", valid="one directory per attempt number")
        numbered[n] = p
    if numbered:
        loose = [p.name for p in case_dir.iterdir() if p.is_file() and p.name.startswith("solver.")]
        if loose:
            raise UsageError(f"{case_dir} holds both attempt directories and {', '.join(loose)}",
                             valid="either DIR/<case>/solver.* or DIR/<case>/attempt_<n>/solver.*")
        return sorted(numbered.items())
    return [(1, case_dir)]


def read_submission(path: Path, names: tuple[str, ...]) -> tuple[dict[str, bytes], tuple[str, str] | None]:
    """The submission's files, or the reason it cannot be run (that attempt's F-Exec)."""
    files = {}
    for name in names:
        f = path / name
        if f.is_symlink():
            return {}, ("invalid_submission", f"{name} is a symbolic link")
        if f.is_file():
            if f.stat().st_size > MAX_SUBMISSION_BYTES:
                return {}, ("invalid_submission", f"{name} is larger than {MAX_SUBMISSION_BYTES} bytes")
            files[name] = f.read_bytes()
    if not files:
        return {}, ("missing_submission", f"no {' or '.join(names)} in {path}")
    return files, None


def _sha(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest() if files else ""


def _t_file(opts: EvalOptions) -> dict[str, float]:
    if opts.timing != "file":
        return {}
    if opts.timing_file is None or not opts.timing_file.is_file():
        raise UsageError("--timing file needs --timing-file FILE (written by casekit calibrate-timing)")
    from casekit.evaluate.calibrate import read_timing_file

    return read_timing_file(opts.timing_file, opts.track)


def plan(opts: EvalOptions, journal: Journal) -> tuple[list[CaseBatch], list[dict[str, Any]]]:
    """Case batches still to run, and the verdicts already in the journal (resumed)."""
    track = TRACKS.get(opts.track)
    names = track.submission_files
    store = opts.store
    batches: dict[str, CaseBatch] = {}
    resumed: list[dict[str, Any]] = []
    for system, root in opts.systems():
        by_case: dict[str, Path] = {}
        for case_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            case_id = store.resolve(case_dir.name)
            if case_id is None:
                raise UsageError(f"{case_dir}: {case_dir.name!r} matches no built case of the {opts.track} track",
                                 valid=", ".join(sorted(store.public_ids())[:8]) + ", ...")
            if case_id in by_case:
                raise UsageError(f"{by_case[case_id]} and {case_dir} are the same case")
            by_case[case_id] = case_dir
        for case_id in sorted(store.records):
            found = by_case.get(case_id)
            attempts: list[tuple[int, Path | None]] = [*attempts_of(found)] if found is not None else [(1, None)]
            for n, path in attempts:
                files: dict[str, bytes]
                failure: tuple[str, str] | None
                if path is None:
                    files, failure = {}, ("missing_submission", "no submission for this case")
                else:
                    files, failure = read_submission(path, names)
                sha = _sha(files)
                done = journal.done((opts.track, system, case_id, n), sha)
                if done is not None:
                    resumed.append(done)
                    continue
                batch = batches.setdefault(case_id, CaseBatch(store.records[case_id], store.reference(case_id)))
                batch.attempts.append(Attempt(system, n, files, sha,
                                              opts.out / "artifacts" / system / case_id / f"attempt_{n}", failure))
    return [batches[k] for k in sorted(batches)], resumed


@dataclass(frozen=True)
class _Context:
    """What a worker needs to score a case batch (picklable: it travels to Dask workers)."""

    track: str
    repeats: int
    memory_mb: int
    runner: str
    timing: str
    t_file: dict[str, float]
    out: Path
    hide: tuple[Path, ...]


def score_batch(item: tuple[CaseBatch, _Context]) -> list[dict[str, Any]]:
    """Every attempt of one case, scored (runs on the executor's workers); the artifacts and the
    submitted code are written under ``OUT/artifacts``, the verdicts returned."""
    batch, ctx = item
    record = batch.record
    limits = Limits(timeout_sec=float(record["evaluation_config"]["timeout_sec"]), memory_mb=ctx.memory_mb)
    if ctx.timing == "file" and record["id"] not in ctx.t_file:
        raise UsageError(f"the timing file has no calibration time for {record['id']}",
                         valid="casekit calibrate-timing over the same cases")
    verdicts = evaluate_case(batch, TRACKS.get(ctx.track), repeats=ctx.repeats, limits=limits, hide=ctx.hide,
                             runner=ctx.runner, timing=ctx.timing, t_file=ctx.t_file.get(record["id"]),
                             calibration_dir=ctx.out / "calibration" / record["id"])
    for attempt, v in zip(batch.attempts, verdicts, strict=True):
        if attempt.files:  # the code next to its artifacts (for feedback prompts)
            sub = attempt.artifacts / "submission"
            sub.mkdir(parents=True, exist_ok=True)
            for name, data in attempt.files.items():
                (sub / name).write_bytes(data)
            v["paths"]["submission"] = str(sub)
    return verdicts


def evaluate(opts: EvalOptions, progress: Callable[[dict[str, Any]], None] = lambda v: None) -> list[dict[str, Any]]:
    """Evaluate, appending to ``OUT/verdicts.jsonl`` as each case's verdicts arrive; returns every
    verdict of the journal for this track and these systems."""
    if opts.timing not in TIMING_MODES:
        raise UsageError(f"unknown timing {opts.timing!r}", valid=", ".join(TIMING_MODES))
    if opts.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if not opts.store.records:
        raise UsageError(f"{opts.store.root} holds no built cases for the {opts.track} track")
    TRACKS.get(opts.track)
    journal = Journal(opts.out / "verdicts.jsonl")
    batches, _ = plan(opts, journal)
    hide = (opts.store.root, opts.out.resolve(), *(p.resolve() for _, p in opts.systems()), *opts.hide)
    ctx = _Context(opts.track, opts.repeats, opts.memory_mb, opts.runner, opts.timing, _t_file(opts),
                   opts.out, hide)

    def arrived(_: Any, verdicts: list[dict[str, Any]]) -> None:
        journal.append(verdicts)
        for v in verdicts:
            progress(v)

    executors.make(opts.executor or ExecutorOptions(jobs=opts.jobs)).run(
        score_batch, [(b, ctx) for b in batches], arrived)
    systems = {name for name, _ in opts.systems()}
    return [v for v in journal.all() if v["track"] == opts.track and v["system"] in systems]


def evaluate_attempt(store: CaseStore, case: str, code: str, out: Path, *, track: str = "dolfinx",
                     system: str = "model", attempt: int = 1, repeats: int = 3, memory_mb: int = 4096,
                     runner: str = "local", timing: str = "paired") -> dict[str, Any]:
    """One attempt's verdict, exactly as ``casekit evaluate`` gives it: ``code`` is the track's
    submission file (``solver.py`` or ``solver.cpp``) for the case ``case`` (public or
    descriptive id); the verdict is appended to ``OUT/verdicts.jsonl`` (for ``casekit report``)
    and returned.  Used by the Inspect integration."""
    case_id = store.resolve(case)
    if case_id is None:
        raise UsageError(f"no built case {case!r} in {store.root}")
    if timing not in ("paired", "build"):
        raise UsageError(f"timing {timing!r} is not available for single attempts", valid="paired, build")
    name = TRACKS.get(track).submission_files[0]
    data = code.encode()
    files: dict[str, bytes] = {name: data} if code.strip() else {}
    failure: tuple[str, str] | None = None
    if not files:
        failure = ("missing_submission", f"the answer holds no {name}")
    elif len(data) > MAX_SUBMISSION_BYTES:
        files, failure = {}, ("invalid_submission", f"{name} is larger than {MAX_SUBMISSION_BYTES} bytes")
    batch = CaseBatch(store.records[case_id], store.reference(case_id), [
        Attempt(system, attempt, files, _sha(files), out / "artifacts" / system / case_id / f"attempt_{attempt}",
                failure)])
    ctx = _Context(track, repeats, memory_mb, runner, timing, {}, out, (store.root, out.resolve()))
    [verdict] = score_batch((batch, ctx))
    Journal(out / "verdicts.jsonl").append([verdict])
    return verdict


__all__ = ["CasekitError", "EvalOptions", "attempts_of", "evaluate", "evaluate_attempt", "read_submission",
           "score_batch"]
