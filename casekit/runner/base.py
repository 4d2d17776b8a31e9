"""What a runner runs and what it reports."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

from casekit.registry import Registry
from casekit.runner.limits import Limits

#: kept of stdout/stderr per run (the tail)
TAIL_BYTES = 64 * 1024
#: the most names a run's working directory may hold when it ends (its outputs are collected
#: from a listing of at most this many; more is the run's failure)
MAX_WORK_ENTRIES = 10_000


class Tail:
    """Drains a pipe in a thread (a run that prints a lot never blocks on it), keeping only the
    last TAIL_BYTES."""

    def __init__(self, stream: BinaryIO) -> None:
        self.data = bytearray()
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: BinaryIO) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
            self.data += chunk
            if len(self.data) > 2 * TAIL_BYTES:
                del self.data[:-TAIL_BYTES]

    def text(self) -> str:
        self.thread.join(timeout=5)
        return bytes(self.data[-TAIL_BYTES:]).decode("utf-8", "replace")


@dataclass
class RunSpec:
    """One isolated run: ``command`` runs in a fresh working directory holding ``inputs`` (file
    name -> content, or the host file to copy: a compiled program stays on disk, never held in
    the evaluator's memory).

    ``env`` is the complete environment of the command (nothing else is inherited).  Every run
    starts from a fresh state: a new working directory, home and scratch, nothing kept from an
    earlier run (JIT caches included).  ``timing`` is how the timed region starts: ``harness``
    (the Python harness writes a start byte on ``CASEKIT_TIMING_FD``), ``wrapper`` (right before
    the command starts: compiled programs), or ``none``; it ends when the run's last process is
    gone.
    """

    command: list[str]
    inputs: dict[str, bytes | Path]
    env: dict[str, str]
    limits: Limits = field(default_factory=Limits)
    timing: str = "harness"
    #: host paths the run must not see (evaluator data; casekit's own package is always added):
    #: masked wherever the run would see them -- inside a needed path or a system directory --
    #: and a run where one cannot be masked is refused (a setup error)
    hide: tuple[Path, ...] = ()
    #: read-only host paths the command needs (interpreters, libraries); nothing else of the host
    #: file system exists in a local sandbox
    needs: tuple[Path, ...] = ()
    #: the container image of the track's environment (container runners only)
    image: str = ""
    #: the largest output file collected (default: the file-size limit)
    max_output_bytes: int | None = None


def write_input(target: Path, data: bytes | Path) -> None:
    """One input of a run at ``target``: the bytes, or a copy of the host file (streamed)."""
    if isinstance(data, Path):
        shutil.copyfile(data, target, follow_symlinks=False)
    else:
        target.write_bytes(data)


@dataclass
class RunResult:
    exit_code: int | None
    timed_out: bool
    #: the timed region, measured outside the sandbox (None if it never started)
    solve_seconds: float | None
    wall_seconds: float
    stdout: str
    stderr: str
    #: files the run left in its working directory (regular files only), copied here
    outputs: Path
    isolation: str
    notes: list[str] = field(default_factory=list)
    #: the run went over its memory limit and was killed for it
    out_of_memory: bool = False
    #: the sandbox could not be set up (the evaluator's problem, not the submission's)
    setup_error: str = ""
    #: the run's outputs could not be collected (the submission's fault: too many files left)
    output_error: str = ""
    #: the CPU time of the timed region, all the run's processes (None where the runner's cgroups
    #: do not account it): what a build projects a refined calibration by, as a busy machine
    #: stretches wall time but not this
    solve_cpu_seconds: float | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Staged:
    """A run brought up to the start of its timed region, waiting for :meth:`go`.

    Sandboxed Python runs spend a fixed part of every run before their timed region (the
    sandbox, the interpreter, the track's library imports: about 0.45 s for DOLFINx).  A series
    of runs (the rounds of an evaluation, a calibration's repeats) stages them together, so that
    part runs on all cores at once, waits until every staged run is ready, and then lets them go
    one after the other: timed regions never overlap, nothing of the submission has run before
    ``go``, and each run is as fresh and isolated as one started on its own (its own sandbox,
    namespaces, scratch and cgroup; a staged run that is waiting has imported only the track's
    libraries).  A runner that cannot stage returns a :class:`Deferred` run.
    """

    def ready(self) -> None:
        """Block until the run waits for :meth:`go` (or has ended, or cannot get there)."""

    def go(self) -> RunResult:
        """Let the run start its timed region; its result once it has ended."""
        raise NotImplementedError

    def cancel(self) -> None:
        """End a run that was never let go (nothing of the submission ran); no-op after ``go``."""


class Deferred(Staged):
    """A run that starts only at :meth:`go` (runners and runs that cannot be staged)."""

    def __init__(self, start: Callable[[], RunResult]) -> None:
        self.start = start
        self.result: RunResult | None = None

    def go(self) -> RunResult:
        if self.result is None:
            self.result = self.start()
        return self.result


class Finished(Staged):
    """A run whose result was known before it started (a setup error)."""

    def __init__(self, result: RunResult) -> None:
        self.result = result

    def go(self) -> RunResult:
        return self.result


class Runner(Protocol):
    name: str

    def available(self) -> tuple[bool, str]:
        """Whether this runner can run here, and why not."""
        ...

    def run(self, spec: RunSpec, dest: Path) -> RunResult:
        """Run ``spec``; the run's output files land in ``dest``."""
        ...

    def stage(self, spec: RunSpec, dest: Path) -> Staged:
        """Start ``spec`` up to its timed region (see :class:`Staged`)."""
        ...


RUNNERS: Registry[Runner] = Registry("runner", plugins="casekit.runner.kinds")
