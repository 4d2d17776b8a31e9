"""The default runner: an isolated local process.

As root it runs the command in fresh mount, PID, network, IPC and UTS namespaces
(``unshare``), as the unprivileged user ``nobody``, in a size-limited tmpfs working directory
that holds only the run's inputs, with evaluator paths hidden under empty tmpfs mounts, a
scrubbed environment, resource limits (``prlimit``) and a wall-clock timeout; the whole process
tree dies with the namespace.  Without root it uses a user namespace for the same isolation
(minus the change of user).  The timed region is measured here, outside the sandbox, from the
harness's start signal to the trusted wrapper's end signal.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from functools import cache
from pathlib import Path

from casekit.errors import CasekitError
from casekit.runner.base import RUNNERS, TAIL_BYTES, RunResult, RunSpec

SCRIPT = (Path(__file__).resolve().parent.parent / "sandbox_script.sh").read_text()
RUNS_ROOT = Path(os.environ.get("CASEKIT_RUNS_DIR", "/tmp/casekit-runs"))
#: where the run's working tree is mounted inside the sandbox (on a fresh tmpfs over /run)
SANDBOX_MNT = "/run/casekit"
SANDBOX_UID = SANDBOX_GID = 65534  # nobody / nogroup


@cache
def _userns_works() -> bool:
    try:
        r = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--net", "--pid", "--fork",
                            "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def isolation_mode() -> str:
    if shutil.which("unshare") is None or shutil.which("prlimit") is None:
        return "unavailable"
    if os.geteuid() == 0:
        return "root"
    return "userns" if _userns_works() else "unavailable"


class _Tail:
    """Drains a pipe in a thread, keeping only the last TAIL_BYTES."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.data = bytearray()
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream) -> None:  # type: ignore[no-untyped-def]
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.data += chunk
            if len(self.data) > 2 * TAIL_BYTES:
                del self.data[:-TAIL_BYTES]

    def text(self) -> str:
        self.thread.join(timeout=5)
        return bytes(self.data[-TAIL_BYTES:]).decode("utf-8", "replace")


class LocalRunner:
    name = "local"

    def available(self) -> tuple[bool, str]:
        mode = isolation_mode()
        if mode == "unavailable":
            return False, "needs unshare and prlimit (util-linux) and root or user namespaces"
        return True, f"namespaces ({'root: runs as nobody' if mode == 'root' else 'user namespace'})"

    def run(self, spec: RunSpec, dest: Path) -> RunResult:
        mode = isolation_mode()
        if mode == "unavailable":
            raise CasekitError("the local sandbox is unavailable here: " + self.available()[1],
                               valid="run as root or enable user namespaces, or use a container runner")
        RUNS_ROOT.mkdir(mode=0o711, parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=RUNS_ROOT))
        try:
            return self._run(spec, dest, run_dir, Path(SANDBOX_MNT), mode)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

    def _run(self, spec: RunSpec, dest: Path, run_dir: Path, mnt: Path, mode: str) -> RunResult:
        (run_dir / "in").mkdir()
        (run_dir / "out").mkdir()
        for name, data in spec.inputs.items():
            if "/" in name or name.startswith("."):
                raise CasekitError(f"input file name {name!r} is not a plain file name")
            (run_dir / "in" / name).write_bytes(data)
        if spec.cache_dir is not None:
            spec.cache_dir.mkdir(parents=True, exist_ok=True)
        hide = _hide_list(spec)
        r_start, w_start = os.pipe()
        r_end, w_end = os.pipe()
        lim = spec.limits
        wrapper_env = {
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "CK_RUN": str(run_dir), "CK_MNT": str(mnt), "CK_DISK_MB": str(lim.disk_mb),
            "CK_CACHE": str(spec.cache_dir or ""), "CK_HIDE": ":".join(str(p) for p in hide),
            "CK_KEEP": ":".join(str(Path(p).resolve()) for p in spec.needs),
            "CK_DROP": "1" if mode == "root" else "0", "CK_UID": str(SANDBOX_UID), "CK_GID": str(SANDBOX_GID),
            "CK_START_FD": str(w_start), "CK_END_FD": str(w_end), "CK_TIMING": spec.timing,
            "CK_LIMITS": " ".join([f"--as={lim.memory_mb * 1024 * 1024}", f"--cpu={lim.cpu}",
                                   f"--fsize={lim.file_mb * 1024 * 1024}", f"--nproc={lim.nproc}",
                                   f"--nofile={lim.nofile}", "--core=0"]),
        }
        ns = ["--mount", "--net", "--pid", "--fork", "--kill-child", "--ipc", "--uts"]
        if mode == "userns":
            ns = ["--user", "--map-root-user", *ns]
        env_args = ["env", "-i", *(f"{k}={v}" for k, v in spec.env.items()),
                    f"HOME={mnt}/home", f"TMPDIR={mnt}/work"]
        if spec.timing == "harness":
            env_args.append(f"CASEKIT_TIMING_FD={w_start}")
        cmd = ["unshare", *ns, "bash", "-c", SCRIPT, "casekit-sandbox", *env_args, *spec.command]
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, env=wrapper_env, pass_fds=(w_start, w_end), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        os.close(w_start)
        os.close(w_end)
        out, err = _Tail(proc.stdout), _Tail(proc.stderr)
        started, ended, timed_out = _watch(r_start, r_end, proc, t0 + lim.timeout_sec)
        if timed_out:
            _kill(proc)
        try:
            exit_code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            _kill(proc)
            exit_code = proc.wait()
        wall = time.monotonic() - t0
        os.close(r_start)
        os.close(r_end)
        dest.mkdir(parents=True, exist_ok=True)
        for f in (run_dir / "out").iterdir():
            if f.is_file() and not f.is_symlink():
                shutil.move(str(f), dest / f.name)
        notes = []
        if exit_code == 90:
            notes.append("the sandbox could not be set up")
        solve = (ended - started) if (started is not None and ended is not None and not timed_out) else None
        return RunResult(None if timed_out else exit_code, timed_out, solve, wall, out.text(), err.text(),
                         dest, f"local/{mode}", notes)


#: top-level directories a run sees: the operating system.  Every other top-level directory
#: (/home, /root, /opt, /srv, /mnt, /var, checkouts such as /work, ...) is hidden, so evaluator
#: data cannot be found wherever it lives; what a run needs inside a hidden one (the track's
#: environment, the casekit package) is kept, read-only.  /tmp, /var/tmp, /dev/shm and /run are
#: replaced by private scratch.
SYSTEM_DIRS = frozenset({"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc",
                         "sys", "run", "tmp"})


def _top_level_hidden(root: Path = Path("/")) -> list[Path]:
    out = []
    for entry in sorted(root.iterdir()):
        if entry.name in SYSTEM_DIRS or entry.is_symlink() or not entry.is_dir():
            continue
        out.append(entry)
    return out


def _hide_list(spec: RunSpec) -> list[Path]:
    """Host paths to hide (a kept path inside one stays visible, read-only): every non-system
    top-level directory plus the run's explicit ``hide`` paths; a path that is itself needed, or
    inside a needed one, is not hidden."""
    needs = [Path(p).resolve() for p in spec.needs]
    out: list[Path] = []
    for p in (RUNS_ROOT, *_top_level_hidden(), *spec.hide):
        p = Path(p).resolve()
        if any(n == p or n in p.parents for n in needs) or p in out:
            continue
        out.append(p)
    # hide outer paths before inner ones so the inner mounts are not shadowed
    return sorted(out, key=lambda q: len(q.parts))


def _watch(r_start: int, r_end: int, proc: subprocess.Popen, deadline: float
           ) -> tuple[float | None, float | None, bool]:
    started = ended = None
    sel = selectors.DefaultSelector()
    sel.register(r_start, selectors.EVENT_READ, "start")
    sel.register(r_end, selectors.EVENT_READ, "end")
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


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


RUNNERS.register("local", LocalRunner())
