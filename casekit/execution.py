"""Running a submission: prepare it for its track, then one untimed warm-up run and ``repeats``
timed runs, each a fresh isolated process in a fresh working directory holding only the agent
view (``case_spec.json``) and the submission.  The runtime is the median of the timed runs'
solve times, measured by the sandbox -- the same protocol for calibration solvers and agents.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit.runner.base import RUNNERS, RunResult
from casekit.runner.limits import Limits
from casekit.scoring.artifacts import ArtifactError
from casekit.tracks.base import Track

#: kept of stderr in verdicts and reports
STDERR_TAIL = 4000


@dataclass
class Execution:
    runs: list[RunResult] = field(default_factory=list)
    #: the artifacts of the last completed run (solution.npz, meta.json, logs)
    artifacts: Path | None = None
    failure: tuple[str, str] | None = None  # (category, message)
    repeats: int = 0

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def solve_times(self) -> list[float]:
        timed = self.runs[len(self.runs) - self.repeats:] if self.repeats else []
        return [r.solve_seconds for r in timed if r.solve_seconds is not None]

    @property
    def runtime(self) -> float | None:
        times = self.solve_times
        return statistics.median(times) if times and len(times) == self.repeats else None

    @property
    def exit_status(self) -> int | None:
        return self.runs[-1].exit_code if self.runs else None

    @property
    def stderr_tail(self) -> str:
        return self.runs[-1].stderr[-STDERR_TAIL:] if self.runs else ""


def execute(track: Track, files: dict[str, bytes], case_spec: dict[str, Any], artifacts: Path, *,
            repeats: int = 0, warmup: bool = True, limits: Limits | None = None,
            cache_dir: Path | None = None, hide: tuple[Path, ...] = (), runner: str = "local") -> Execution:
    """Run ``files`` on ``case_spec``; the last run's outputs end up in ``artifacts``."""
    limits = limits or Limits()
    run = RUNNERS.get(runner)
    ex = Execution(repeats=repeats)
    with tempfile.TemporaryDirectory(prefix="casekit-exec-") as tmp:
        work = Path(tmp)
        try:
            prepared = track.prepare(files, work, runner=runner, hide=hide)
        except PrepareError as exc:
            ex.failure = (exc.category, exc.message)
            return ex
        total = (1 if warmup or repeats == 0 else 0) + repeats
        for i in range(total):
            dest = work / f"run{i}"
            spec = track.run_spec(prepared, case_spec, limits, cache_dir, hide)
            result = run.run(spec, dest)
            ex.runs.append(result)
            (dest / "stdout.txt").write_text(result.stdout)
            (dest / "stderr.txt").write_text(result.stderr)
            if result.timed_out:
                ex.failure = ("timeout", f"no result within {limits.timeout_sec:g} s")
            elif result.exit_code != 0:
                ex.failure = ("crash", _crash_message(result))
            else:
                try:
                    track.adapt_output(dest, case_spec)
                except ArtifactError as exc:
                    ex.failure = (exc.category, exc.message)
            _keep(dest, artifacts)
            if ex.failure:
                break
    ex.artifacts = artifacts
    return ex


def _crash_message(result: RunResult) -> str:
    last = [ln for ln in result.stderr.strip().splitlines() if ln.strip()]
    tail = last[-1] if last else "no error output"
    if result.exit_code == 3:
        return f"the submission has no usable solve function: {tail}"
    if result.exit_code == 90:
        return "the sandbox could not be set up: " + tail
    if result.exit_code is not None and result.exit_code > 128:
        return f"killed by signal {result.exit_code - 128} (limits: memory, CPU time, files): {tail}"
    return f"exit status {result.exit_code}: {tail}"


def _keep(src: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in ("solution.npz", "meta.json", "stdout.txt", "stderr.txt", "solution_grid.bin"):
        f = src / name
        if f.is_file() and not f.is_symlink():
            shutil.copy2(f, dest / name)


class PrepareError(Exception):
    """A submission that cannot be prepared (e.g. a C++ compile error)."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category
        self.message = message
