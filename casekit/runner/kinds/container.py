"""Container runners (docker, podman, apptainer) for machines that have an engine.

A run is the same contract as the local sandbox: a fresh working directory and home holding only
the run's inputs (bind-mounted at ``/work``; nothing survives from one run to the next), the
track's image (``RunSpec.image``), no network, an unprivileged user, a read-only root, private
scratch, memory / process / file-size limits and a wall-clock timeout. The timed region starts
when the harness (or, for compiled programs, the in-container wrapper) writes a byte into the
bind-mounted timing FIFO, and ends when the engine's process exits -- measured here, outside the
container (the kernel's monotonic clock is shared, so the harness cannot move it). Engine start-up
and teardown fall outside the start signal or are a small constant after it; compare runtimes
within one runner only.

Only :func:`command` builds engine command lines; it is pure and tested without an engine.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from casekit.errors import CasekitError
from casekit.runner.base import MAX_WORK_ENTRIES, RUNNERS, Deferred, RunResult, RunSpec, Staged, Tail, write_input
from casekit.runner.supervisor import TooManyEntries, read_outputs

#: where the inputs and the timing FIFO appear inside the container
WORK, TIMING = "/work", "/casekit/timing"
#: the unprivileged user runs execute as (nobody:nogroup)
USER = "65534:65534"


def _python_command(spec: RunSpec) -> list[str]:
    """Inside an image the track's interpreter is the image's ``python3``, not the host's path."""
    cmd = list(spec.command)
    if cmd and os.path.isabs(cmd[0]) and Path(cmd[0]).name.startswith("python"):
        cmd[0] = "python3"
    return cmd


def _inner(spec: RunSpec) -> list[str]:
    cmd = _python_command(spec)
    if spec.timing == "wrapper":  # compiled programs: the start is when the program starts
        return ["sh", "-c", f'printf s > {TIMING}; exec "$@"', "casekit-wrapper", *cmd]
    return cmd


def _env(spec: RunSpec) -> dict[str, str]:
    env = {k: v for k, v in spec.env.items() if k != "PATH"}
    env.update({"HOME": f"{WORK}/.home", "TMPDIR": "/tmp"})
    if spec.timing == "harness":
        env["CASEKIT_TIMING_PATH"] = TIMING
    return env


@dataclass(frozen=True)
class Engine:
    name: str

    def command(self, spec: RunSpec, image: str, work: Path, fifo: Path) -> list[str]:
        """The engine command line of one run (pure: no engine needed)."""
        lim = spec.limits
        env = _env(spec)
        if self.name == "apptainer":
            return ["apptainer", "exec", "--containall", "--cleanenv", "--no-home", "--net", "--network", "none",
                    "--writable-tmpfs", "--bind", f"{work}:{WORK}", "--bind", f"{fifo}:{TIMING}", "--pwd", WORK,
                    *(a for k, v in sorted(env.items()) for a in ("--env", f"{k}={v}")),
                    f"docker://{image}", "prlimit", f"--as={lim.memory_mb * 1024 * 1024}", f"--cpu={lim.cpu}",
                    f"--fsize={lim.file_mb * 1024 * 1024}", f"--nofile={lim.nofile}", "--", *_inner(spec)]
        return [self.name, "run", "--rm", "--init", "--network", "none", "--user", USER, "--read-only",
                "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
                "--memory", f"{lim.memory_mb}m", "--memory-swap", f"{lim.memory_mb}m",
                "--pids-limit", str(lim.nproc), "--cpus", "1",
                "--ulimit", f"fsize={lim.file_mb * 1024 * 1024}", "--ulimit", f"nofile={lim.nofile}",
                "--ulimit", f"cpu={lim.cpu}", "--ulimit", "core=0",
                "--tmpfs", f"/tmp:rw,size={lim.disk_mb}m,mode=1777",
                "--volume", f"{work}:{WORK}:rw", "--volume", f"{fifo}:{TIMING}:rw", "--workdir", WORK,
                *(a for k, v in sorted(env.items()) for a in ("--env", f"{k}={v}")),
                image, *_inner(spec)]


def _engine_status(engine: str) -> tuple[bool, str]:
    """Whether the engine answers (a client without a daemon does not count).  The probe is
    cached per executable found on the current PATH, so a changed PATH is seen."""
    executable = shutil.which(engine)
    if executable is None:
        return False, f"{engine} is not installed"
    return _probe(engine, executable)


@cache
def _probe(engine: str, executable: str) -> tuple[bool, str]:
    probe = [executable, "version"] if engine == "apptainer" else [executable, "info", "--format", "{{.ServerVersion}}"]
    try:
        r = subprocess.run(probe, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{engine} does not answer: {exc}"
    if r.returncode != 0:
        return False, f"{engine} is installed but its engine does not answer: " + \
            ((r.stderr or r.stdout).strip().splitlines() or ["no output"])[-1][:200]
    return True, f"{engine} {r.stdout.strip()[:40]}"


class ContainerRunner:
    def __init__(self, engine: str) -> None:
        self.name = engine
        self.engine = Engine(engine)

    def available(self) -> tuple[bool, str]:
        return _engine_status(self.name)

    def stage(self, spec: RunSpec, dest: Path) -> Staged:
        """Container runs start at ``go`` (an engine's start-up is not staged)."""
        return Deferred(lambda: self.run(spec, dest))

    def run(self, spec: RunSpec, dest: Path) -> RunResult:
        ok, why = self.available()
        if not ok:
            raise CasekitError(f"the {self.name} runner is unavailable here: {why}", valid="local")
        if not spec.image:
            raise CasekitError("this run names no container image (the track's environment has none)")
        with tempfile.TemporaryDirectory(prefix="casekit-container-") as tmp:
            work, fifo = Path(tmp) / "work", Path(tmp) / "timing"
            work.mkdir()
            os.mkfifo(fifo, 0o666)
            for name, data in spec.inputs.items():
                if "/" in name or name.startswith("."):
                    raise CasekitError(f"input file name {name!r} is not a plain file name")
                write_input(work / name, data)
            (work / ".home").mkdir()
            for p in (work, work / ".home"):
                p.chmod(0o777)
            return self._run(spec, dest, work, fifo)

    def _run(self, spec: RunSpec, dest: Path, work: Path, fifo: Path) -> RunResult:
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        t0 = time.monotonic()
        proc = subprocess.Popen(self.engine.command(spec, spec.image, work, fifo), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        out, err = Tail(proc.stdout), Tail(proc.stderr)  # type: ignore[arg-type]
        started, timed_out = _watch(proc, reader, t0 + spec.limits.timeout_sec)
        ended = time.monotonic()
        if timed_out:
            proc.kill()
        proc.wait()
        os.close(reader)
        dest.mkdir(parents=True, exist_ok=True)
        # the container and every process in it are gone (docker run --rm --init returns after
        # that): read what the run left, never following links, bounded
        skipped: list[str] = []
        output_error = ""
        dfd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            cap = min(spec.limits.file_mb * 2**20, spec.max_output_bytes or spec.limits.file_mb * 2**20)
            for name, data in read_outputs(dfd, set(spec.inputs) | {".home"}, 32, cap, 2 * cap, skipped,
                                           max_entries=MAX_WORK_ENTRIES):
                (dest / name).write_bytes(data)
        except TooManyEntries as exc:
            output_error = str(exc)
        finally:
            os.close(dfd)
        solve = ended - started if started is not None and not timed_out else None
        return RunResult(None if timed_out else proc.returncode, timed_out, solve, ended - t0, out.text(), err.text(),
                         dest, self.name, [f"outputs not collected: {', '.join(skipped)}"] if skipped else [],
                         output_error=output_error)


def _watch(proc: subprocess.Popen[bytes], reader: int, deadline: float) -> tuple[float | None, bool]:
    """(start, timed out): the first byte on the timing FIFO, until the engine's process exits
    (seen at once through a pidfd) or the deadline.  Once every writer has closed the FIFO it
    reads EOF for ever, so it is unregistered (as the local runner's watch does): the loop sleeps
    in ``select`` instead of spinning a core through the timed region."""
    started = None
    sel = selectors.DefaultSelector()
    sel.register(reader, selectors.EVENT_READ, "start")
    pidfd: int | None = None
    try:
        pidfd = os.pidfd_open(proc.pid)
        sel.register(pidfd, selectors.EVENT_READ, "exit")
    except (AttributeError, OSError):  # no pidfd (Linux < 5.3): poll the process
        pass
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return started, True
            events = sel.select(timeout=remaining if pidfd is not None else min(remaining, 0.05))
            now = time.monotonic()
            exited = proc.poll() is not None
            for key, _ in events:
                if key.data != "start":
                    continue
                data = os.read(reader, 64)
                if not data:
                    sel.unregister(reader)
                elif started is None:
                    started = now
            if exited:
                return started, False
    finally:
        sel.close()
        if pidfd is not None:
            os.close(pidfd)


for _engine in ("docker", "podman", "apptainer"):
    RUNNERS.register(_engine, ContainerRunner(_engine))
