"""``casekit evaluate``: run every submission of one or more systems against the built cases.

A submissions directory (one per system) holds one solver per case (``DIR/<case>/solver.py`` or
``solver.cpp``), or with attempts ``DIR/<case>/attempt_<n>/...``; ``<case>`` is the case's public
id (what agents see) or its descriptive id.  Every case of the dataset gets a verdict for every
system: a case without a submission is F-Exec ("no submission"), so skipping cases never raises
a pass rate.  Work is grouped by case -- all attempts of all systems with the case's calibration
solver timed beside them (paired timing) -- and verdicts are appended to the journal
``OUT/verdicts.jsonl`` as each case finishes: a killed evaluation keeps them and resumes.
Each verdict carries the content hash of the case record it was scored against; resuming
re-scores (runs again) every journaled verdict whose record has changed since -- the case was
rebuilt, its thresholds or reference changed -- or that carries no hash (an older casekit's), so
an evaluation directory never mixes verdicts of two builds of one case.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit import executors
from casekit.errors import CasekitError, UsageError
from casekit.evaluate.journal import Journal, Key
from casekit.evaluate.pairing import Attempt, CaseBatch, evaluate_case
from casekit.evaluate.store import CaseStore
from casekit.evaluate.verdicts import record_hash
from casekit.executors import ExecutorOptions
from casekit.ids import no_such_case
from casekit.prompts.variants import check_variant, variant_of
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS

MAX_SUBMISSION_BYTES = 2 * 1024 * 1024
TIMING_MODES = ("paired", "build", "file")
ATTEMPT_DIR = re.compile(r"attempt_([0-9]{1,6})")
#: attempts per case and system (feedback loops and best-of-n stay far below)
MAX_ATTEMPTS = 100


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
    #: resolutions of the self-convergence diagnostic runs (empty: none); never gates
    convergence: tuple[int, ...] = ()
    #: the prompt variant the submissions were written from (casekit.prompts.variants), recorded
    #: in every verdict
    prompt_variant: str = "standard"
    #: evaluate only these cases (descriptive or public ids) -- explicitly: a benchmark score
    #: covers every case, and counts one without a submission as a failure (the default)
    only: tuple[str, ...] = ()
    #: evaluate only the cases some system submitted for (with ``only``: those too)
    only_submitted: bool = False

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
            self._not_a_parent(Path(d))
            out.append((name, Path(d)))
        return out

    def _not_a_parent(self, d: Path) -> None:
        """Refuse a directory one level too high -- its entries are systems, not cases -- which
        would otherwise be scored as one system that submitted nothing."""
        entries = [p for p in sorted(d.iterdir()) if p.is_dir()]
        if any(self.store.resolve(p.name) is not None for p in entries):
            return
        systems = [p for p in entries if any(q.is_dir() and self.store.resolve(q.name) is not None
                                             for q in p.iterdir())]
        if systems:
            shown = ", ".join(p.name for p in systems[:5]) + (f" and {len(systems) - 5} more" if len(systems) > 5
                                                              else "")
            raise UsageError(f"{d} holds no case directories but systems' submissions directories ({shown}): "
                             "name each system's directory", valid=" ".join(f"--submissions {p}" for p in systems))


@dataclass(frozen=True)
class Work:
    """What an evaluation runs: case batches and the attempts they hold (every system's), and
    the verdicts taken from the journal instead (a resume)."""

    cases: int
    attempts: int
    resumed: int
    #: of the attempts, those that run (the others never run: no submission, or one that cannot be read)
    runs: int = 0
    #: the cases the evaluation covers, and the store's (fewer when it is restricted: ``only``)
    covered: int = 0
    of: int = 0


class LayoutError(Exception):
    """A submission directory that cannot be read as one case's attempts: that case's F-Exec."""


def _is_real_dir(p: Path) -> bool:
    return p.is_dir() and not p.is_symlink()


def attempts_of(case_dir: Path) -> list[tuple[int, Path]]:
    """The attempts in a case directory: ``attempt_<n>`` directories (n from 1 to
    ``MAX_ATTEMPTS``, ASCII digits), or the directory itself as attempt 1.  A symbolic link, two
    directories for one attempt number (attempt_1, attempt_01) or a mix of both layouts raises
    :class:`LayoutError`, which fails this case only."""
    if not _is_real_dir(case_dir):
        raise LayoutError(f"{case_dir.name} is not a directory of its own (a symbolic link or a file)")
    numbered: dict[int, Path] = {}
    for p in sorted(case_dir.iterdir()):
        m = ATTEMPT_DIR.fullmatch(p.name)
        if not m:
            continue
        if not _is_real_dir(p):
            raise LayoutError(f"{p.name} is not a directory (a symbolic link or a file)")
        n = int(m.group(1))
        if not 1 <= n <= MAX_ATTEMPTS:
            raise LayoutError(f"{p.name}: attempts are numbered from 1 to {MAX_ATTEMPTS}")
        if n in numbered:
            raise LayoutError(f"{numbered[n].name} and {p.name} are both attempt {n}")
        numbered[n] = p
    if numbered:
        loose = [p.name for p in case_dir.iterdir() if p.name.startswith("solver.")]
        if loose:
            raise LayoutError(f"both attempt directories and {', '.join(sorted(loose))}: either <case>/solver.* or "
                              "<case>/attempt_<n>/solver.*")
        return sorted(numbered.items())
    return [(1, case_dir)]


def read_submission(path: Path, names: tuple[str, ...]) -> tuple[dict[str, bytes], tuple[str, str] | None]:
    """The submission's files, or the reason it cannot be run (that attempt's F-Exec).  Each is
    a regular file opened without following links (the evaluator may read what its author could
    not; a hard link needs read access to its target, so it shows nothing a copy would not)."""
    files = {}
    for name in names:
        f = path / name
        try:
            fd = os.open(f, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            continue
        except OSError as exc:
            why = "a symbolic link" if f.is_symlink() else f"unreadable ({exc.strerror})"
            return {}, ("invalid_submission", f"{name} is {why}")
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                return {}, ("invalid_submission", f"{name} is not a regular file")
            if st.st_size > MAX_SUBMISSION_BYTES:
                return {}, ("invalid_submission", f"{name} is larger than {MAX_SUBMISSION_BYTES} bytes")
            files[name] = fh.read(MAX_SUBMISSION_BYTES + 1)
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


def plan(opts: EvalOptions, journal: Journal, ignored: list[str] | None = None,
         rescored: list[str] | None = None) -> tuple[list[CaseBatch], list[dict[str, Any]]]:
    """Case batches still to run, and the verdicts already in the journal (resumed).  A case
    directory that cannot be read as attempts fails that case (F-Exec, with the reason); an entry
    that names no case is listed in ``ignored``, never run.  A journaled verdict scored against
    another version of its case record (or against one it does not name) is run again, and
    listed in ``rescored``."""
    ignored = [] if ignored is None else ignored
    rescored = [] if rescored is None else rescored
    track = TRACKS.get(opts.track)
    names = track.submission_files
    store = opts.store
    batches: dict[str, CaseBatch] = {}
    resumed: list[dict[str, Any]] = []
    submitted: dict[str, dict[str, list[Path]]] = {}
    for system, root in opts.systems():
        _same_variant(journal, opts.track, system, opts.prompt_variant)
        by_case = submitted.setdefault(system, {})
        for case_dir in sorted(root.iterdir()):
            case_id = store.resolve(case_dir.name)
            if case_id is None:
                if case_dir.is_dir():
                    ignored.append(f"{system}: {case_dir.name!r} matches no built case of the {opts.track} track")
                continue
            by_case.setdefault(case_id, []).append(case_dir)
    covered = selected(opts, {c for by_case in submitted.values() for c in by_case})
    for system, by_case in submitted.items():
        for case_id in covered:
            found = by_case.get(case_id, [])
            current = record_hash(store.records[case_id])
            attempts: list[tuple[int, Path | None, tuple[str, str] | None]]
            try:
                if len(found) > 1:
                    raise LayoutError(f"{' and '.join(p.name for p in found)} are the same case")
                attempts = [(n, p, None) for n, p in attempts_of(found[0])] if found else \
                    [(1, None, ("missing_submission", "no submission for this case"))]
            except LayoutError as exc:
                attempts = [(1, None, ("invalid_submission", str(exc)[:500]))]
            for n, path, failure in attempts:
                files: dict[str, bytes] = {}
                if path is not None:
                    files, failure = read_submission(path, names)
                sha = _sha(files)  # empty when none were read: the attempt never runs
                done = _journaled(journal, (opts.track, system, case_id, n), sha, failure)
                if done is not None and done.get("record_content_hash") == current:
                    resumed.append(done)
                    continue
                if done is not None:
                    why = "its case record changed since it was scored" if done.get("record_content_hash") else \
                        "its verdict names no case record (written by an older casekit): treated as changed"
                    rescored.append(f"{system} {case_id} attempt {n}: {why}")
                batch = batches.setdefault(case_id, CaseBatch(store.records[case_id], store.reference(case_id)))
                batch.attempts.append(Attempt(system, n, files, sha,
                                              opts.out / "artifacts" / system / case_id / f"attempt_{n}", failure,
                                              opts.prompt_variant))
    return [batches[k] for k in sorted(batches)], resumed


def selected(opts: EvalOptions, submitted: set[str] | None = None) -> list[str]:
    """The cases an evaluation covers: every case of the store -- a benchmark score, in which a
    case without a submission is a failure -- unless it is restricted explicitly, to the cases
    ``only`` names and, with ``only_submitted``, those some system submitted for (``submitted``)."""
    store = opts.store
    if not opts.only and not opts.only_submitted:
        return sorted(store.records)
    chosen = set(submitted or ()) if opts.only_submitted else set()
    for name in opts.only:
        case_id = store.resolve(name)
        if case_id is None:
            raise no_such_case(name, [*store.records, *store.public_ids()], f"{store.root} ({opts.track})")
        chosen.add(case_id)
    if not chosen:
        raise UsageError("no submissions directory holds a case of the evaluation, so --only-submitted leaves none",
                         valid="DIR/<case id>/solver.py, with the case ids (or public ids) of the cases")
    return sorted(chosen)


#: failures known before anything runs: the attempt is never prepared nor run
NOT_RUN = ("missing_submission", "invalid_submission")


def ran(verdict: dict[str, Any]) -> bool:
    """Whether the verdict's attempt was prepared and run (it had a submission that could be
    read): the attempts that take an evaluation's time."""
    return bool(verdict.get("submission_sha256"))


def _journaled(journal: Journal, key: Key, sha: str, failure: tuple[str, str] | None) -> dict[str, Any] | None:
    """The journal's verdict of an attempt when it still stands (:meth:`Journal.done`).  An
    attempt that never runs is given again -- nothing runs, it costs nothing -- when the journal's
    verdict of it, which never ran either, gave another reason or was keyed by the reason's hash
    (an older casekit's), so a verdict of nothing always says why now."""
    v = journal.verdicts.get(key)
    if v is not None and not sha and failure is not None and _never_ran(v):
        same = v.get("submission_sha256") == "" and v.get("failure") == {"category": failure[0],
                                                                          "message": failure[1][:2000]}
        return v if same else None
    return journal.done(key, sha)


def _never_ran(v: dict[str, Any]) -> bool:
    """Whether a journaled verdict is of an attempt that never ran: no submission's hash (an
    older casekit wrote the hash of the reason instead)."""
    failure = v.get("failure") or {}
    if failure.get("category") not in NOT_RUN:
        return False
    sha = v.get("submission_sha256", "")
    return not sha or sha == hashlib.sha256(repr((failure["category"], failure.get("message"))).encode()).hexdigest()


def _same_variant(journal: Journal, track: str, system: str, variant: str) -> None:
    """A system's verdicts in one journal come from one prompt variant: resuming it with another
    is refused (the report would mix two experiments under one name)."""
    given = {variant_of(v) for v in journal.all() if v["track"] == track and v["system"] == system}
    if given - {variant}:
        raise UsageError(f"{journal.path} holds verdicts of {system!r} on {track} written from "
                         f"{', '.join(sorted(given))} prompts; this evaluation says {variant}",
                         valid="--prompt-variant " + " ".join(sorted(given)) + ", or another --system or --out for "
                               "the other variant")


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
    convergence: tuple[int, ...] = ()


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
                             calibration_dir=ctx.out / "calibration" / record["id"], convergence=ctx.convergence)
    for attempt, v in zip(batch.attempts, verdicts, strict=True):
        if attempt.files:  # the code next to its artifacts (for feedback prompts)
            sub = attempt.artifacts / "submission"
            sub.mkdir(parents=True, exist_ok=True)
            for name, data in attempt.files.items():
                (sub / name).write_bytes(data)
            v["paths"]["submission"] = str(sub)
    return verdicts


def check_memory(opts: EvalOptions) -> None:
    """Refuse an evaluation whose workers on this machine could together need more memory than
    it has: each needs a run's limit (``memory_mb``), or the track's compile limit when that is
    larger.  Workers on a Dask scheduler elsewhere are not checked here."""
    from casekit.build.machine import available_memory_mb

    ex = opts.executor or ExecutorOptions(jobs=opts.jobs)
    if ex.scheduler:
        return
    track = TRACKS.get(opts.track)
    per_worker = max(opts.memory_mb, track.prepare_memory_mb)
    have = available_memory_mb()
    if have is not None and ex.jobs * per_worker > have:
        why = f"--memory-mb {opts.memory_mb}" if per_worker == opts.memory_mb else \
            f"the {track.name} track's compile limit of {per_worker} MiB"
        raise UsageError(f"--jobs {ex.jobs} workers x {per_worker} MiB ({why}) = {ex.jobs * per_worker} MiB is more "
                         f"than the {have} MiB of memory available here",
                         valid=f"at most {max(1, have // per_worker)} job(s), or a smaller --memory-mb")


def evaluate(opts: EvalOptions, done: Callable[[list[dict[str, Any]]], None] = lambda verdicts: None,
             warn: Callable[[str], None] = lambda message: None,
             planned: Callable[[Work], None] = lambda work: None) -> list[dict[str, Any]]:
    """Evaluate, appending to ``OUT/verdicts.jsonl`` as each case's verdicts arrive; returns every
    verdict of the journal for this track and these systems.  ``planned`` hears what is to run
    before anything runs, ``done`` gets each case's verdicts as they are journaled (for a
    progress display)."""
    if opts.timing not in TIMING_MODES:
        raise UsageError(f"unknown timing {opts.timing!r}", valid=", ".join(TIMING_MODES))
    check_variant(opts.prompt_variant)
    if opts.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if not opts.store.records:
        raise UsageError(f"{opts.store.root} holds no built cases for the {opts.track} track")
    check_memory(opts)
    journal = Journal(opts.out / "verdicts.jsonl")
    ignored: list[str] = []
    rescored: list[str] = []
    batches, resumed = plan(opts, journal, ignored, rescored)
    covered = {b.record["id"] for b in batches} | {v["case_id"] for v in resumed}  # each run or resumed
    planned(Work(len(batches), sum(len(b.attempts) for b in batches), len(resumed),
                 runs=sum(a.failure is None for b in batches for a in b.attempts), covered=len(covered),
                 of=len(opts.store.records)))
    for message in ignored:
        warn(f"ignored: {message}")
    for message in rescored:
        warn(f"re-scoring {message}")
    hide = (opts.store.root, opts.out.resolve(), *(p.resolve() for _, p in opts.systems()), *opts.hide)
    ctx = _Context(opts.track, opts.repeats, opts.memory_mb, opts.runner, opts.timing, _t_file(opts),
                   opts.out, hide, opts.convergence)

    def arrived(_: Any, verdicts: list[dict[str, Any]]) -> None:
        done(journal.append(verdicts))

    executors.make(opts.executor or ExecutorOptions(jobs=opts.jobs)).run(
        score_batch, [(b, ctx) for b in batches], arrived)
    systems = {name for name, _ in opts.systems()}
    return [v for v in journal.all() if v["track"] == opts.track and v["system"] in systems and v["case_id"] in covered]


def evaluate_attempt(store: CaseStore, case: str, code: str, out: Path, *, track: str = "dolfinx",
                     system: str = "model", attempt: int = 1, repeats: int = 3, memory_mb: int = 4096,
                     runner: str = "local", timing: str = "paired", epoch: int = 1,
                     prompt_variant: str = "standard") -> dict[str, Any]:
    """One attempt's verdict, exactly as ``casekit evaluate`` gives it: ``code`` is the track's
    submission file (``solver.py`` or ``solver.cpp``) for the case ``case`` (public or
    descriptive id); the verdict is appended to ``OUT/verdicts.jsonl`` (for ``casekit report``)
    and returned; ``epoch`` > 1 (Inspect's repeated samples) keeps its artifacts apart.  Used by
    the Inspect integration, which calls it one attempt at a time."""
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
    where = out / "artifacts" / system / case_id / (f"epoch_{epoch}" if epoch > 1 else "") / f"attempt_{attempt}"
    batch = CaseBatch(store.records[case_id], store.reference(case_id), [
        Attempt(system, attempt, files, _sha(files), where, failure, check_variant(prompt_variant))])
    ctx = _Context(track, repeats, memory_mb, runner, timing, {}, out, (store.root, out.resolve()))
    journal = Journal(out / "verdicts.jsonl")
    _same_variant(journal, track, system, prompt_variant)
    [verdict] = journal.append(score_batch((batch, ctx)))
    return verdict


__all__ = ["CasekitError", "EvalOptions", "attempts_of", "evaluate", "evaluate_attempt", "read_submission",
           "score_batch"]
