"""Running a submission: prepare it once for its track (compile a C++ program), then runs, each a
fresh isolated process in a fresh working directory holding only the agent view
(``case_spec.json``) and the submission -- nothing carries from one run to the next.  The
runtime is the median of the runs' solve times, measured by the runner outside the sandbox; the
same protocol for calibration solvers and agents.  Every run counts: each one's exit and
artifacts are checked, and a failure names the run it happened in.
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import tempfile
from collections.abc import Callable, Generator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError
from casekit.runner.base import RUNNERS, RunResult, Staged
from casekit.runner.limits import Limits
from casekit.scoring.artifacts import ArtifactError
from casekit.tracks.base import Track

#: kept of stderr in verdicts and reports
STDERR_TAIL = 4000
#: the files of a run kept next to its verdict
KEPT = ("solution.npz", "meta.json", "targets.json", "stdout.txt", "stderr.txt", "solution_grid.bin")

Failure = tuple[str, str]  # (category, message)
#: checks one run's outputs (a directory); returns a failure or None
Check = Callable[[Path], "Failure | None"]


@dataclass
class Execution:
    runs: list[RunResult] = field(default_factory=list)
    #: the artifacts of the last run (solution.npz, meta.json, logs)
    artifacts: Path | None = None
    failure: Failure | None = None
    #: which run failed ("run 2 of 3"), when one did
    failed_run: str = ""
    timed: bool = True

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def solve_times(self) -> list[float]:
        return [r.solve_seconds for r in self.runs if r.solve_seconds is not None] if self.timed else []

    @property
    def runtime(self) -> float | None:
        """The median of the runs' solve times (None unless every run succeeded and was timed)."""
        times = self.solve_times
        return statistics.median(times) if times and len(times) == len(self.runs) and self.ok else None

    @property
    def slowest(self) -> float | None:
        """The slowest run: what the evaluator's runtime gate takes (no run may buy time for
        another, the way no run may be inaccurate)."""
        return max(self.solve_times) if self.runtime is not None else None

    @property
    def exit_status(self) -> int | None:
        return self.runs[-1].exit_code if self.runs else None

    @property
    def stderr_tail(self) -> str:
        return self.runs[-1].stderr[-STDERR_TAIL:] if self.runs else ""


class PrepareError(Exception):
    """A submission that cannot be prepared (e.g. a C++ compile error)."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category
        self.message = message


def run_once(track: Track, prepared: dict[str, bytes | Path], case_spec: dict[str, Any], dest: Path, *, limits: Limits,
             hide: tuple[Path, ...], runner: str, check: Check | None = None) -> tuple[RunResult, Failure | None]:
    """One fresh isolated run of a prepared submission; its outputs (adapted to the canonical
    artifacts) and logs land in ``dest``.  A sandbox that cannot be set up raises: that is the
    evaluator's failure, never the submission's."""
    result = RUNNERS.get(runner).run(track.run_spec(prepared, case_spec, limits, hide), dest)
    return result, _checked(track, result, case_spec, dest, limits=limits, runner=runner, check=check)


@dataclass
class Planned:
    """One run of a series: a prepared submission on a case_spec, its outputs to ``dest``."""
    prepared: dict[str, bytes | Path]
    case_spec: dict[str, Any]
    dest: Path
    check: Check | None = None
    #: this run's limits when not the series' (casekit's own calibration, see casekit.evaluate.pairing)
    limits: Limits | None = None


#: how many workers of an executor share this machine (each stages its series on its share of the cores)
_SHARING = 1


def on_shared_machine(fn: Callable[[Any], Any], workers: int, item: Any) -> Any:
    """``fn(item)`` in a worker that shares its machine with ``workers`` workers (executors wrap
    their tasks with it, ``functools.partial(on_shared_machine, fn, workers)``)."""
    global _SHARING
    _SHARING = max(1, workers)
    return fn(item)


def staging_width() -> int:
    """How many runs a series stages at once: this worker's share of the usable cores, among the
    workers of its executor or ``$CASEKIT_SHARED_BY`` processes that evaluate or build on this
    machine at the same time (whichever is more)."""
    try:
        shared = int(os.environ.get("CASEKIT_SHARED_BY", "1"))
    except ValueError:
        shared = 1
    return max(1, len(os.sched_getaffinity(0)) // max(_SHARING, shared, 1))


def run_series(track: Track, runs: Sequence[Planned], *, limits: Limits, hide: tuple[Path, ...], runner: str,
               ahead: int | None = None) -> Generator[tuple[RunResult, Failure | None], None, None]:
    """Runs one after the other, as :func:`run_once` each (fresh, isolated, timed regions never
    overlapping), with their untimed start-up staged ``ahead`` at a time (default: this worker's
    share of the usable cores, :func:`staging_width`) where the runner can: see
    :class:`~casekit.runner.base.Staged`.  A generator: each run is let go when the caller asks
    for its result; closing it early (``break`` inside ``contextlib.closing``, an exception)
    cancels the staged runs never let go."""
    the_runner = RUNNERS.get(runner)
    width = max(1, ahead if ahead is not None else staging_width())
    for first in range(0, len(runs), width):
        chunk = runs[first:first + width]
        staged: list[Staged] = []
        try:
            for r in chunk:
                staged.append(the_runner.stage(track.run_spec(r.prepared, r.case_spec, r.limits or limits, hide),
                                               r.dest))
            for s in staged:
                s.ready()
            for r, s in zip(chunk, staged, strict=True):
                result = s.go()
                yield result, _checked(track, result, r.case_spec, r.dest, limits=r.limits or limits, runner=runner,
                                       check=r.check)
        finally:
            for s in staged:
                s.cancel()


def _checked(track: Track, result: RunResult, case_spec: dict[str, Any], dest: Path, *, limits: Limits,
             runner: str, check: Check | None) -> Failure | None:
    """The run's logs written to ``dest`` and its failure, if any."""
    if result.setup_error:
        raise CasekitError(f"the {runner} sandbox could not be set up: {result.setup_error}")
    (dest / "stdout.txt").write_text(result.stdout)
    (dest / "stderr.txt").write_text(result.stderr)
    failure: Failure | None = None
    if result.timed_out:
        failure = ("timeout", f"no result within {limits.timeout_sec:g} s")
    elif result.exit_code != 0:
        failure = ("crash", crash_message(result))
    elif result.output_error:
        failure = ("invalid_artifact", result.output_error)
    else:
        try:
            track.adapt_output(dest, case_spec)
        except ArtifactError as exc:
            failure = (exc.category, exc.message)
        except Exception as exc:  # whatever a run left, it is that run's failure, never the evaluation's
            failure = ("scoring_error", f"the outputs could not be read: {type(exc).__name__}: {str(exc)[:300]}")
        if failure is None and check is not None:
            failure = check(dest)
    return failure


def execute(track: Track, files: dict[str, bytes], case_spec: dict[str, Any], artifacts: Path, *,
            repeats: int = 0, limits: Limits | None = None, hide: tuple[Path, ...] = (),
            runner: str = "local", check: Check | None = None,
            stop: Callable[[Path], bool] | None = None) -> Execution:
    """Prepare ``files`` and run them ``max(repeats, 1)`` times (timed when ``repeats > 0``),
    stopping at the first failed run, or after a run whose outputs (in ``artifacts``) satisfy
    ``stop``; the last run's outputs end up in ``artifacts``."""
    limits = limits or Limits()
    total = max(repeats, 1)
    ex = Execution(timed=repeats > 0)
    with tempfile.TemporaryDirectory(prefix="casekit-exec-") as tmp:
        work = Path(tmp)
        try:
            prepared = track.prepare(files, work, runner=runner, hide=hide)
        except PrepareError as exc:
            ex.failure = (exc.category, exc.message)
            return ex
        plan = [Planned(prepared, case_spec, work / f"run{i}", check) for i in range(total)]
        with closing(run_series(track, plan, limits=limits, hide=hide, runner=runner)) as series:
            for i, (result, failure) in enumerate(series):
                ex.runs.append(result)
                keep(plan[i].dest, artifacts)
                if failure:
                    ex.failure = failure
                    ex.failed_run = run_label(i, total)
                    break
                if stop is not None and stop(artifacts):
                    break
    ex.artifacts = artifacts
    return ex


def run_label(index: int, total: int) -> str:
    return f"run {index + 1} of {total}"


#: lines after which a library states its error (the message is the rest of the line or, when
#: that is empty, the next line with text): deal.II's exception block ends in separators and a
#: stack trace, so its last line never says what went wrong; a C++ exception that ends the
#: program prints "what():"
_ERROR_MARKERS = ("Additional information:", "what():")


def error_line(stderr: str) -> str:
    """The line of a run's error output that says what went wrong (at most 500 characters): the
    message after the last library marker (:data:`_ERROR_MARKERS`), else the last line with a
    letter or digit in it (a Python traceback's exception), never a separator."""
    lines = [ln.strip() for ln in stderr.splitlines() if any(c.isalnum() for c in ln)]
    if not lines:
        return "no error output"
    for i in range(len(lines) - 1, -1, -1):
        marker = next((m for m in _ERROR_MARKERS if lines[i].startswith(m)), None)
        if marker is None:
            continue
        rest = lines[i][len(marker):].strip()
        if rest:
            return rest[:500]
        if i + 1 < len(lines):
            return lines[i + 1][:500]
    return lines[-1][:500]


def crash_message(result: RunResult) -> str:
    tail = error_line(result.stderr)
    if result.exit_code == 3:
        return f"the submission has no usable solve function: {tail}"
    if result.out_of_memory:
        return f"killed: out of memory (the run's limit covers its processes and scratch files): {tail}"
    if result.exit_code == 128 + signal.SIGXCPU:
        return f"killed: the run used up its CPU-time limit (SIGXCPU): {tail}"
    if result.exit_code is not None and result.exit_code > 128:
        return f"killed by signal {result.exit_code - 128} (limits: memory, CPU time, files): {tail}"
    return f"exit status {result.exit_code}: {tail}"


def keep(src: Path, dest: Path) -> None:
    """Copy a run's artifacts and logs to ``dest`` (replacing what was there)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in KEPT:
        f = src / name
        if f.is_file() and not f.is_symlink():
            shutil.copy2(f, dest / name)
