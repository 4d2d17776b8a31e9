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
import struct
import subprocess
import sys
import tempfile
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError
from casekit.runner import bwrap, cgroups, seccomp
from casekit.runner.base import RUNNERS, RunResult, RunSpec, Tail
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
    own package and data, and the cache directories of the bound environments -- that the run
    would see, i.e. that lies inside a system directory or a bound environment (``needs``,
    resolved).  Raises :class:`Unmaskable` for a hidden path that is visible and cannot be
    masked: one that is (or holds) what the run needs, or one that does not exist yet (created
    later, it would appear in the live bind)."""
    roots = bwrap.visible_roots(needs)
    strict = {Path(os.path.realpath(p)) for p in hide}
    # where casekit may be installed, and caches left in an environment: masked where they exist
    optional = {Path(os.path.realpath(p)) for p in (*_casekit_paths(), *(n / c for n in needs for c in ENV_CACHES))}
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
        why = unavailable_reason()
        if why:
            raise CasekitError("the local sandbox is unavailable here, so untrusted code is not run: " + why,
                               valid="run as root, or without root with unprivileged user namespaces and a "
                                     "delegated cgroup v2 subtree; or use a container runner")
        return self._run_checked(spec, dest, isolation_mode())

    def _run_checked(self, spec: RunSpec, dest: Path, mode: str) -> RunResult:
        for name in spec.inputs:
            if "/" in name or name.startswith(".") or not name:
                raise CasekitError(f"input file name {name!r} is not a plain file name")
        needs = [Path(os.path.realpath(p)) for p in spec.needs]
        try:
            mask_dirs, mask_files = masks(spec.hide, needs)
        except Unmaskable as exc:  # never run with something hidden in sight
            dest.mkdir(parents=True, exist_ok=True)
            return RunResult(None, False, None, 0.0, "", "", dest, f"local/{mode}", setup_error=str(exc))
        try:
            cg = cgroups.manager().create(spec.limits.memory_mb, spec.limits.nproc, spec.limits.cpus)
        except (cgroups.CgroupUnavailable, OSError) as exc:
            raise CasekitError(f"cannot create the run's cgroup: {exc}") from None
        RUNS_ROOT.mkdir(mode=0o711, parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=RUNS_ROOT))
        try:
            return self._run(spec, dest, run_dir, mode, cg, needs, mask_dirs, mask_files)
        finally:
            cg.remove()
            shutil.rmtree(run_dir, ignore_errors=True)

    def _run(self, spec: RunSpec, dest: Path, run_dir: Path, mode: str, cg: cgroups.RunCgroup, needs: list[Path],
             mask_dirs: list[Path], mask_files: list[Path]) -> RunResult:
        inputs, work = run_dir / "in", run_dir / "work"
        inputs.mkdir(mode=0o700)
        work.mkdir(mode=0o700)
        for name, data in spec.inputs.items():
            (inputs / name).write_bytes(data)
        (run_dir / "seccomp.bpf").write_bytes(seccomp.program())
        lim = spec.limits
        r_start, w_start = os.pipe()
        r_end, w_end = os.pipe()
        r_res, w_res = os.pipe()
        timed = spec.timing in ("harness", "wrapper")
        env = dict(spec.env)
        if spec.timing == "harness":
            env["CASEKIT_TIMING_FD"] = str(w_start)
        empty = run_dir / "masked"  # bound over hidden files the run would see
        empty.touch(mode=0o000)
        argv = bwrap.command(argv=list(spec.command), env=env, needs=needs, masks=mask_dirs, work=work,
                             scratch_bytes=lim.disk_mb * 1024 * 1024, mode=mode, uid=SANDBOX_UID,
                             gid=SANDBOX_GID, start_fd=w_start if timed else None, timing=spec.timing,
                             mask_files=mask_files, empty=empty)
        config = {
            "mode": mode, "uid": SANDBOX_UID, "gid": SANDBOX_GID, "work": str(work), "inputs": str(inputs),
            "input_names": sorted(spec.inputs), "disk_mb": lim.disk_mb, "bwrap": argv,
            "seccomp": str(run_dir / "seccomp.bpf"),
            "cgroup": cg.to_supervisor(), "pass_fds": [w_start] if timed else [],
            "rlimits": {"cpu": lim.cpu, "fsize": lim.file_mb * 1024 * 1024, "nofile": lim.nofile, "core": 0},
            "end_fd": w_end, "result_fd": w_res,
            "collect": {"max_files": MAX_OUTPUT_FILES, "max_file_bytes": _max_file(spec),
                        "max_total_bytes": 2 * _max_file(spec)},
        }
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-I", str(SUPERVISOR)], env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                                pass_fds=(w_start, w_end, w_res), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        for fd in (w_start, w_end, w_res):
            os.close(fd)
        out, err = Tail(proc.stdout), Tail(proc.stderr)  # type: ignore[arg-type]
        results = _Results(r_res, dest)
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(config).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        started, ended, timed_out = _watch(r_start, r_end, proc, t0 + lim.timeout_sec)
        if timed_out:
            cg.kill()
            _kill(proc)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            cg.kill()
            _kill(proc)
            proc.wait()
        wall = time.monotonic() - t0
        os.close(r_start)
        os.close(r_end)
        results.join()
        status = results.status
        notes: list[str] = []
        setup_error = str(status.get("setup_error", ""))
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
        dest.mkdir(parents=True, exist_ok=True)
        return RunResult(exit_code, timed_out, solve, wall, out.text(), err.text(), dest, f"local/{mode}", notes,
                         out_of_memory=oom, setup_error=setup_error)


def _max_file(spec: RunSpec) -> int:
    limit = spec.limits.file_mb * 1024 * 1024
    return min(limit, spec.max_output_bytes) if spec.max_output_bytes else limit


def _watch(r_start: int, r_end: int, proc: subprocess.Popen[bytes], deadline: float
           ) -> tuple[float | None, float | None, bool]:
    """(start, end, timed out): the first byte on each descriptor, until the end byte, the
    supervisor's exit or the deadline."""
    started = ended = None
    sel = selectors.DefaultSelector()
    sel.register(r_start, selectors.EVENT_READ, "start")
    sel.register(r_end, selectors.EVENT_READ, "end")
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return started, ended, True
            events = sel.select(timeout=min(remaining, 0.5))
            now = time.monotonic()
            for key, _ in events:
                data = os.read(key.fd, 64)
                if not data:
                    sel.unregister(key.fd)
                    continue
                if key.data == "start" and started is None:
                    started = now
                elif key.data == "end" and ended is None:
                    ended = now
            if ended is not None or proc.poll() is not None:
                return started, ended, False
    finally:
        sel.close()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


RUNNERS.register("local", LocalRunner())
