"""The default runner: an isolated local process (bubblewrap + a cgroup per run).

A run is started by a trusted supervisor (``casekit/runner/supervisor.py``) in a private mount
namespace.  The command runs under bubblewrap on a root built from nothing -- the operating
system's directories and the track's environment read-only, fresh size-limited scratch and home,
the working directory holding only the run's inputs -- in new PID, network (loopback only), IPC,
UTS and cgroup namespaces, as an unprivileged user without capabilities, inside its own cgroup
(memory including its tmpfs pages, process count, CPU quota) with per-process limits on CPU
time, file size and open files, and a wall-clock timeout.

Two modes, chosen by who runs casekit:

* ``root``: bubblewrap runs privileged and ``setpriv`` drops to ``nobody`` (uid 65534) with no
  capabilities and ``no_new_privs`` right before the command.
* ``userns`` (without root): the supervisor makes its own user namespace for the work tmpfs, and
  bubblewrap a nested one in which the command is uid 65534; it needs unprivileged user
  namespaces and a cgroup v2 subtree delegated to the user.

Where either cannot be had, the runner refuses to run untrusted code (no weaker fallback).

The timed region starts when the harness (or, for compiled programs, the trusted start wrapper)
writes its start byte, and ends when the run's last process is gone: when the command exits,
the supervisor kills whatever is left in the run's cgroup and waits for it before it signals the
end.  Outputs are read after that, by the sandbox's own user, never following links.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError
from casekit.ids import secret_files
from casekit.runner import bwrap, cgroups, seccomp
from casekit.runner.base import (
    MAX_WORK_ENTRIES,
    RUNNERS,
    Deferred,
    Finished,
    RunResult,
    RunSpec,
    Staged,
    Tail,
    write_input,
)
from casekit.runner.supervisor import SETUP_FAILED

SUPERVISOR = Path(__file__).resolve().parent.parent / "supervisor.py"
RUNS_ROOT = Path(os.environ.get("CASEKIT_RUNS_DIR", "/tmp/casekit-runs"))
SANDBOX_UID = SANDBOX_GID = 65534  # nobody / nogroup
#: how many output files, and how large, a run may hand back
MAX_OUTPUT_FILES = 32


def _casekit_paths() -> list[Path]:
    """casekit's own package and data (wherever they are installed): never visible to a run, even
    inside a bound environment or a system directory.  The data directories next to the package
    are casekit's only in a source checkout (an installed wheel carries them inside the package;
    next to it, in site-packages, a directory of that name belongs to another distribution)."""
    import site

    import casekit

    pkg = Path(casekit.__file__).resolve().parent
    installed = [Path(p) / "casekit" for p in site.getsitepackages()]
    data = [pkg.parent / d for d in ("schemas", "templates", "cases")] if (pkg.parent / "pyproject.toml").is_file() \
        else []
    return [pkg, *data, *installed]


class Unmaskable(Exception):
    """A hidden path the run would see and that cannot be masked: the run is refused."""


#: cache directories at the top of a bound environment (Firedrake's default is ``sys.prefix/.cache``
#: when the prefix is writable): whatever a trusted process compiled there is not a run's business
ENV_CACHES = (".cache",)


def masks(hide: tuple[Path, ...], needs: list[Path]) -> tuple[list[Path], list[Path]]:
    """(directories, other files) to mask in a run: every path of ``hide`` -- and of casekit's
    own package and data, the secrets casekit knows of (salt files, ``casekit.ids.secret_files``)
    and the cache directories of the bound environments -- that the run would see, i.e. that lies
    inside a system directory or a bound environment (``needs``, resolved).  Raises
    :class:`Unmaskable` for a hidden path that is visible and cannot be masked: one that is (or
    holds) what the run needs, or one that does not exist yet (created later, it would appear in
    the live bind)."""
    roots = bwrap.visible_roots(needs)
    strict = {Path(os.path.realpath(p)) for p in hide}
    # where casekit may be installed, its secrets, and caches left in an environment: masked where they exist
    optional = {Path(os.path.realpath(p)) for p in (*_casekit_paths(), *secret_files(),
                                                    *(n / c for n in needs for c in ENV_CACHES))}
    optional -= strict
    found: list[Path] = []
    for path in sorted(strict | optional, key=lambda q: len(q.parts)):
        if not any(r == path or r in path.parents for r in roots):
            continue  # nothing of the host outside the roots exists in the sandbox
        if any(r == path or path in r.parents for r in roots):
            raise Unmaskable(f"the hidden path {path} is, or holds, what every run sees or needs "
                             f"({', '.join(str(r) for r in roots if r == path or path in r.parents)})")
        if any(m in path.parents for m in found):
            continue  # inside a masked directory already
        if not os.path.lexists(path):
            if path in strict:
                raise Unmaskable(f"the hidden path {path} lies where runs see the host's files and does not exist "
                                 "yet, so it cannot be masked (created during the run, it would be visible): "
                                 "create it first or move it elsewhere")
            continue
        found.append(path)
    dirs = [p for p in found if p.is_dir()]
    return dirs, [p for p in found if not p.is_dir()]


class _Results:
    """Reads the supervisor's result frames in a thread; output files land in ``dest``."""

    def __init__(self, fd: int, dest: Path) -> None:
        self.dest = dest
        self.status: dict[str, Any] = {}
        self.skipped: list[str] = []
        self.files: list[str] = []
        self.error = ""
        self.stream = os.fdopen(fd, "rb", buffering=1 << 16)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _exact(self, n: int) -> bytes:
        data = self.stream.read(n)
        if data is None or len(data) != n:
            raise EOFError
        return data

    def _read(self) -> None:
        try:
            while True:
                try:
                    (size,) = struct.unpack(">I", self._exact(4))
                except EOFError:
                    return
                if size > 1 << 20:
                    raise ValueError("oversized frame header")
                header = json.loads(self._exact(size))
                if "file" in header:
                    name = str(header["file"])
                    if "/" in name or name.startswith("."):
                        raise ValueError(f"bad output name {name!r}")
                    self.dest.mkdir(parents=True, exist_ok=True)
                    tmp = self.dest / f".{name}.part"
                    with open(tmp, "wb") as fh:
                        left = int(header["size"])
                        while left:
                            chunk = self._exact(min(left, 1 << 20))
                            fh.write(chunk)
                            left -= len(chunk)
                    os.replace(tmp, self.dest / name)
                    self.files.append(name)
                elif "skipped" in header:
                    self.skipped = [str(s) for s in header["skipped"]]
                else:
                    self.status.update(header)
        except (EOFError, ValueError, OSError) as exc:
            self.error = f"the run's outputs could not be read: {exc}"
        finally:
            self.stream.close()

    def join(self) -> None:
        self.thread.join(timeout=60)


@cache
def _probe(mode: str) -> str:
    """Runs ``true`` through the whole sandbox once; "" when it works, else why not."""
    runner = LocalRunner()
    with tempfile.TemporaryDirectory(prefix="casekit-probe-") as tmp:
        try:
            r = runner._run_checked(RunSpec(["/bin/true"], {}, {"PATH": "/usr/bin:/bin"}, timing="none"),
                                    Path(tmp) / "out", mode)
        except CasekitError as exc:
            return exc.message
    if r.setup_error:
        return r.setup_error
    if r.exit_code != 0:
        return f"a trial run exited with {r.exit_code}: {r.stderr.strip()[-500:]}"
    return ""


def isolation_mode() -> str:
    """``root``, ``userns`` or ``unavailable`` (:func:`unavailable_reason` says why)."""
    return "unavailable" if unavailable_reason() else ("root" if os.geteuid() == 0 else "userns")


@cache
def unavailable_reason() -> str:
    mode = "root" if os.geteuid() == 0 else "userns"
    try:
        bwrap.binary()
        cgroups.manager()
        seccomp.program()
    except (bwrap.BwrapUnavailable, cgroups.CgroupUnavailable, seccomp.SeccompUnavailable) as exc:
        return str(exc)
    return _probe(mode)


class LocalRunner:
    name = "local"

    def available(self) -> tuple[bool, str]:
        why = unavailable_reason()
        if why:
            return False, why
        mode = isolation_mode()
        return True, (f"bubblewrap sandbox ({'root: runs as nobody' if mode == 'root' else 'user namespace'}), "
                      f"{cgroups.manager().how}")

    def run(self, spec: RunSpec, dest: Path) -> RunResult:
        return self.stage(spec, dest).go()

    def stage(self, spec: RunSpec, dest: Path) -> Staged:
        """Start ``spec`` up to its timed region: a run timed by the Python harness imports the
        track's libraries and then waits for :meth:`Staged.go` before it touches the submission
        (see :class:`~casekit.runner.base.Staged`); other runs start at ``go``."""
        why = unavailable_reason()
        if why:
            raise CasekitError("the local sandbox is unavailable here, so untrusted code is not run: " + why,
                               valid="run as root, or without root with unprivileged user namespaces and a "
                                     "delegated cgroup v2 subtree; or use a container runner")
        mode = isolation_mode()
        if spec.timing != "harness":
            return Deferred(lambda: self._run_checked(spec, dest, mode))
        return self._launch_checked(spec, dest, mode, staged=True)

    def _run_checked(self, spec: RunSpec, dest: Path, mode: str) -> RunResult:
        return self._launch_checked(spec, dest, mode, staged=False).go()

    def _launch_checked(self, spec: RunSpec, dest: Path, mode: str, *, staged: bool) -> Staged:
        for name in spec.inputs:
            if "/" in name or name.startswith(".") or not name:
                raise CasekitError(f"input file name {name!r} is not a plain file name")
        needs = [Path(os.path.realpath(p)) for p in spec.needs]
        try:
            mask_dirs, mask_files = masks(spec.hide, needs)
        except Unmaskable as exc:  # never run with something hidden in sight
            dest.mkdir(parents=True, exist_ok=True)
            return Finished(RunResult(None, False, None, 0.0, "", "", dest, f"local/{mode}", setup_error=str(exc)))
        try:
            cg = cgroups.manager().create(spec.limits.memory_mb, spec.limits.nproc, spec.limits.cpus)
        except (cgroups.CgroupUnavailable, OSError) as exc:
            raise CasekitError(f"cannot create the run's cgroup: {exc}") from None
        try:
            _sweep_runs_dir()
            run_dir = Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=RUNS_ROOT))
        except BaseException:
            cg.remove()
            raise
        try:
            return _LiveRun(spec, dest, run_dir, mode, cg, needs, mask_dirs, mask_files, staged=staged)
        except BaseException:
            cg.remove()
            shutil.rmtree(run_dir, ignore_errors=True)
            raise


@cache
def _sweep_runs_dir() -> None:
    """Make the runs directory, and remove what runs of processes that are gone left in it (a
    killed build's inputs; their sandboxes and work directories died with them).  Once per
    process."""
    RUNS_ROOT.mkdir(mode=0o711, parents=True, exist_ok=True)
    for d in RUNS_ROOT.glob("run-*-*"):
        pid = d.name.split("-")[1]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except PermissionError:
            pass  # alive, someone else's


class _LiveRun(Staged):
    """One sandboxed run from its start to its result.  Staged (``staged``), the harness gets one
    end of a go channel (a socket pair): it writes a ready byte on the timing descriptor once the
    track's libraries are imported and waits for one byte on the go channel before it writes the
    start byte and touches the submission; the channel's end of file (:meth:`cancel`) makes it
    exit.  The
    run's wall-clock timeout and wall time count its time before the ready byte (or before it
    ended, if it never got there) and after ``go``, never the wait between them.  A staged run
    that starts its timed region before ``go`` does not follow the protocol: it is killed and
    reported as a setup error (the evaluator's fault, never the submission's)."""

    def __init__(self, spec: RunSpec, dest: Path, run_dir: Path, mode: str, cg: cgroups.RunCgroup,
                 needs: list[Path], mask_dirs: list[Path], mask_files: list[Path], *, staged: bool) -> None:
        self.spec, self.dest, self.run_dir, self.mode, self.cg = spec, dest, run_dir, mode, cg
        self.done: RunResult | None = None
        #: when the ready byte came (or the run ended before it); None: not waited for yet
        self.ready_at: float | None = None
        self.protocol_error = ""
        #: seconds between the ready byte and go: no part of the run's time
        self.waited = 0.0
        self.let_go = False
        inputs, work = run_dir / "in", run_dir / "work"
        inputs.mkdir(mode=0o700)
        work.mkdir(mode=0o700)
        for name, data in spec.inputs.items():
            write_input(inputs / name, data)
        (run_dir / "seccomp.bpf").write_bytes(seccomp.program())
        lim = spec.limits
        fds: list[int] = []  # every descriptor opened here, closed if the start fails

        def pipe() -> tuple[int, int]:
            r, w = os.pipe()
            fds.extend((r, w))
            return r, w

        try:
            r_start, w_start = pipe()
            r_end, w_end = pipe()
            r_res, w_res = pipe()
            # the go channel is a socket pair: a send to a run that has ended fails with an error
            # (MSG_NOSIGNAL), where a pipe would raise SIGPIPE -- which a process that imported
            # PETSc (whose signal handler aborts) does not survive
            r_go, self.w_go = _go_channel(fds) if staged else (-1, -1)
            timed = spec.timing in ("harness", "wrapper")
            env = dict(spec.env)
            if spec.timing == "harness":
                env["CASEKIT_TIMING_FD"] = str(w_start)
            if staged:
                env["CASEKIT_GO_FD"] = str(r_go)
            empty = run_dir / "masked"  # bound over hidden files the run would see
            empty.touch(mode=0o000)
            argv = bwrap.command(argv=list(spec.command), env=env, needs=needs, masks=mask_dirs, work=work,
                                 scratch_bytes=lim.disk_mb * 1024 * 1024, mode=mode, uid=SANDBOX_UID,
                                 gid=SANDBOX_GID, start_fd=w_start if timed else None, timing=spec.timing,
                                 mask_files=mask_files, empty=empty)
            sandbox_fds = ([w_start] if timed else []) + ([r_go] if staged else [])
            config = {
                "mode": mode, "uid": SANDBOX_UID, "gid": SANDBOX_GID, "work": str(work), "inputs": str(inputs),
                "input_names": sorted(spec.inputs), "disk_mb": lim.disk_mb, "bwrap": argv,
                "seccomp": str(run_dir / "seccomp.bpf"),
                "cgroup": cg.to_supervisor(), "pass_fds": sandbox_fds,
                "rlimits": {"cpu": lim.cpu, "fsize": lim.file_mb * 1024 * 1024, "nofile": lim.nofile, "core": 0},
                "end_fd": w_end, "result_fd": w_res,
                "collect": {"max_files": MAX_OUTPUT_FILES, "max_entries": MAX_WORK_ENTRIES,
                            "max_file_bytes": _max_file(spec),
                            "max_total_bytes": 2 * _max_file(spec)},
            }
            self.t0 = time.monotonic()
            self.proc = subprocess.Popen([sys.executable, "-I", str(SUPERVISOR)],
                                         env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                                         pass_fds=(w_start, w_end, w_res, *([r_go] if staged else [])),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         start_new_session=True)
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        for fd in (w_start, w_end, w_res, *([r_go] if staged else [])):
            os.close(fd)
        self.r_start, self.r_end = r_start, r_end
        try:
            self.out, self.err = Tail(self.proc.stdout), Tail(self.proc.stderr)  # type: ignore[arg-type]
            self.results = _Results(r_res, dest)
            r_res = -1
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps(config).encode())
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        except BaseException:
            _kill(self.proc)
            self.proc.wait()
            for fd in (r_res, self.w_go):
                if fd >= 0:
                    os.close(fd)
            self.w_go = -1
            self._close()
            raise

    def ready(self) -> None:
        if self.w_go < 0 or self.ready_at is not None or self.done is not None:
            return
        state, at = _wait_ready(self.r_start, self.proc, self.t0 + self.spec.limits.timeout_sec)
        self.ready_at = at
        if state == "early":
            self.protocol_error = ("the run started its timed region before it was let go: its harness does not "
                                   "follow the staging protocol (CASEKIT_GO_FD)")
            self.cg.kill()
            _kill(self.proc)

    def go(self) -> RunResult:
        if self.done is not None:
            return self.done
        lim = self.spec.limits
        deadline = self.t0 + lim.timeout_sec
        if self.w_go >= 0:
            self.ready()
            assert self.ready_at is not None
            self.waited = max(0.0, time.monotonic() - self.ready_at)  # the wait for go is not the run's time
            deadline += self.waited
            try:
                _send_go(self.w_go)
            except OSError:
                pass  # the run has ended already: its result says how
            os.close(self.w_go)
            self.w_go = -1
        self.let_go = True
        try:
            started, ended, timed_out, cpu = _watch(self.r_start, self.r_end, self.proc, deadline,
                                                    self.cg.cpu_seconds)
            self.done = self._finish(started, ended, timed_out, cpu)
        finally:
            self._release()
        return self.done

    def cancel(self) -> None:
        if self.done is not None:
            return
        if self.w_go >= 0:
            os.close(self.w_go)  # end of file on the go channel: the harness exits untouched
            self.w_go = -1
        self.cg.kill()
        _kill(self.proc)
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            pass
        self.results.join()
        self.done = RunResult(None, False, None, time.monotonic() - self.t0 - self.waited, "", "", self.dest,
                              f"local/{self.mode}",
                              ["stopped while it ran" if self.let_go else "cancelled before it started"])
        self._release()

    def _close(self) -> None:
        for tail in (getattr(self, "out", None), getattr(self, "err", None)):
            if tail is not None:
                tail.thread.join(timeout=5)  # the process is gone: its pipes are at their end
        for fd in (self.r_start, self.r_end):
            if fd >= 0:
                os.close(fd)
        self.r_start = self.r_end = -1
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass

    def _release(self) -> None:
        self._close()
        self.cg.remove()
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def _finish(self, started: float | None, ended: float | None, timed_out: bool,
                cpu: float | None = None) -> RunResult:
        proc, cg, lim = self.proc, self.cg, self.spec.limits
        if timed_out:
            cg.kill()
            _kill(proc)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            cg.kill()
            _kill(proc)
            proc.wait()
        wall = time.monotonic() - self.t0 - self.waited
        results = self.results
        results.join()
        status = results.status
        notes: list[str] = []
        setup_error = self.protocol_error or str(status.get("setup_error", ""))
        if proc.returncode == SETUP_FAILED and not setup_error:
            setup_error = "the sandbox could not be set up"
        if not timed_out and not setup_error and "exit_code" not in status:
            setup_error = results.error or f"the supervisor ended without a result (status {proc.returncode})"
        oom = cg.oom_killed()
        if oom:
            notes.append(f"out of memory: the run went over its limit of {lim.memory_mb} MiB (processes and scratch)")
        if status.get("all_gone") is False:
            notes.append("processes of the run could not be killed; its outputs were not read")
        if results.skipped:
            notes.append("outputs not collected (not regular files, bad names or too large): "
                         + ", ".join(results.skipped))
        if results.error:
            notes.append(results.error)
        peak = cg.peak_memory()
        if peak is not None:
            notes.append(f"peak memory {peak / 2**20:.0f} MiB")
        exit_code = None if timed_out or setup_error else int(status["exit_code"])
        solve = (ended - started) if (started is not None and ended is not None and not timed_out) else None
        self.dest.mkdir(parents=True, exist_ok=True)
        return RunResult(exit_code, timed_out, solve, wall, self.out.text(), self.err.text(), self.dest,
                         f"local/{self.mode}", notes, out_of_memory=oom, setup_error=setup_error,
                         output_error=str(status.get("output_error", "")),
                         solve_cpu_seconds=cpu if solve is not None else None)


def _max_file(spec: RunSpec) -> int:
    limit = spec.limits.file_mb * 1024 * 1024
    return min(limit, spec.max_output_bytes) if spec.max_output_bytes else limit


def _watch(r_start: int, r_end: int, proc: subprocess.Popen[bytes], deadline: float,
           cpu: Callable[[], float | None] = lambda: None
           ) -> tuple[float | None, float | None, bool, float | None]:
    """(start, end, timed out, CPU seconds between them): the first byte on each descriptor, until
    the end byte, the supervisor's exit or the deadline; ``cpu()`` reads the run's CPU time."""
    started = ended = None
    cpu_start = cpu_end = None
    sel = selectors.DefaultSelector()
    sel.register(r_start, selectors.EVENT_READ, "start")
    sel.register(r_end, selectors.EVENT_READ, "end")
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return started, ended, True, None
            events = sel.select(timeout=min(remaining, 0.5))
            now = time.monotonic()
            for key, _ in events:
                data = os.read(key.fd, 64)
                if not data:
                    sel.unregister(key.fd)
                    continue
                if key.data == "start" and started is None and b"s" in data:
                    started, cpu_start = now, cpu()
                elif key.data == "end" and ended is None:
                    ended, cpu_end = now, cpu()
            if ended is not None or proc.poll() is not None:
                used = cpu_end - cpu_start if cpu_start is not None and cpu_end is not None else None
                return started, ended, False, used
    finally:
        sel.close()


def _go_channel(opened: list[int]) -> tuple[int, int]:
    """(the run's end, casekit's end) of a connected socket pair, both appended to ``opened``."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    run_end, own_end = b.detach(), a.detach()
    opened.extend((run_end, own_end))
    return run_end, own_end


def _send_go(fd: int) -> None:
    """One byte on casekit's end of the go channel, without SIGPIPE if the run has ended."""
    with socket.socket(fileno=os.dup(fd)) as sock:
        sock.send(b"g", socket.MSG_NOSIGNAL)


def _wait_ready(r_start: int, proc: subprocess.Popen[bytes], deadline: float) -> tuple[str, float]:
    """Wait for a staged run's ready byte on its timing descriptor: (``ready``, when it came),
    (``ended``, when) if the run ended first, (``late``, when) once the deadline passed, or
    (``early``, when) if the start byte came instead -- the run did not wait for go."""
    sel = selectors.DefaultSelector()
    sel.register(r_start, selectors.EVENT_READ)
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "late", time.monotonic()
            if sel.select(timeout=min(remaining, 0.5)):
                at = time.monotonic()
                data = os.read(r_start, 1)
                if not data:
                    return "ended", at
                if data == b"r":
                    return "ready", at
                return "early", at
            if proc.poll() is not None:
                return "ended", time.monotonic()
    finally:
        sel.close()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.returncode is not None:
        return  # reaped: its process group id may belong to another process by now
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


RUNNERS.register("local", LocalRunner())
