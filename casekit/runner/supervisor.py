"""The trusted process around one sandboxed run (executed by path, never inside the sandbox).

The local runner starts ``python -I supervisor.py`` with a JSON configuration on stdin.  This
file imports nothing from casekit, so it runs the same whatever the host has installed, and the
host imports its cgroup helpers (:func:`kill_all`, :func:`members`) from here: one place for them.

What one run is:

1. A private mount namespace (as root) -- or a user and mount namespace (without root) -- in
   which a size-limited tmpfs becomes the run's working directory and receives the inputs.  The
   tmpfs exists only in this namespace: it disappears with the supervisor, whatever happens.
2. bubblewrap starts the command inside the run's cgroup (memory including tmpfs pages, process
   count, CPU quota) in fresh PID, network, IPC, UTS and cgroup namespaces, on a new root that
   holds only what the host listed (system directories and the track's environment, read-only),
   as an unprivileged user with no capabilities.
3. When the command exits, every process left in the run's cgroup is killed and waited for;
   only then is the end of the timed region signalled (a byte on the end descriptor, which the
   sandbox never holds).  Nothing of the run survives it.
4. The outputs are read as the sandbox's own unprivileged user (no links followed, regular files
   only, names and sizes bounded) and streamed to the host on the result descriptor as frames:
   a 4-byte big-endian length, a JSON header, then ``size`` bytes of content for file frames.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import stat
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18
#: a collected output file's name
OUTPUT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: exit status of the supervisor when it could not set the run up (the host reports it as such)
SETUP_FAILED = 90
#: seconds of CPU time a run may use after its CPU-time limit's SIGXCPU before it is killed
CPU_GRACE_SECONDS = 2


# -- cgroups (also used by the host) -------------------------------------------------------
def members(cgroup: dict[str, Any]) -> list[int]:
    """PIDs in the run's cgroup (v2: its directory; v1: its pids hierarchy, where every process
    of the run is)."""
    pids: list[int] = []
    for d in cgroup["kill_dirs"]:
        try:
            text = Path(d, "cgroup.procs").read_text()
        except OSError:
            continue
        pids.extend(int(p) for p in text.split())
    return sorted(set(pids))


def kill_all(cgroup: dict[str, Any], timeout: float = 20.0) -> bool:
    """SIGKILL every process of the cgroup until none is left (True) or ``timeout`` passes.
    v2 uses ``cgroup.kill``; v1 repeats kill-what-is-listed (a killed process forks no more)."""
    deadline = time.monotonic() + timeout
    if cgroup.get("version") == 2:
        for d in cgroup["kill_dirs"]:
            try:
                Path(d, "cgroup.kill").write_text("1")
            except OSError:
                pass
    while True:
        pids = members(cgroup)
        if not pids:
            return True
        if time.monotonic() > deadline:
            return False
        for pid in pids:
            if pid in (os.getpid(), os.getppid()):
                continue  # never the caller: a listed pid reused after its run's process ended
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.002)


# -- the run -------------------------------------------------------------------------------
class SetupError(Exception):
    pass


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)}")


def _private_namespace(mode: str) -> None:
    libc = _libc()
    if mode == "userns":
        uid, gid = os.getuid(), os.getgid()
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "cannot create a user and mount namespace")
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
        Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
    else:
        _check(libc.unshare(CLONE_NEWNS), "cannot create a mount namespace")
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "cannot make the mounts private")


def _mount_work(work: str, size_mb: int) -> None:
    libc = _libc()
    opts = f"size={int(size_mb)}m,mode=0700".encode()
    _check(libc.mount(b"casekit-work", work.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts),
           f"cannot mount the work tmpfs on {work}")


def _place_inputs(cfg: dict[str, Any]) -> None:
    work, src = Path(cfg["work"]), Path(cfg["inputs"])
    for entry in sorted(os.listdir(src)):
        data = (src / entry).read_bytes()
        target = work / entry
        with open(target, "wb") as fh:
            fh.write(data)
        os.chmod(target, 0o644)
    if cfg["mode"] == "root":
        for p in (work, *work.iterdir()):
            os.chown(p, cfg["uid"], cfg["gid"])


def _options_fd(options: list[str]) -> int:
    """A descriptor holding bubblewrap's options, NUL-separated (read with ``--args``)."""
    fd = os.memfd_create("bwrap-options", 0)
    view = memoryview(b"".join(o.encode() + b"\0" for o in options))
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _start(cfg: dict[str, Any]) -> subprocess.Popen[bytes]:
    cg, limits = cfg["cgroup"], cfg["rlimits"]
    seccomp_fd = os.open(cfg["seccomp"], os.O_RDONLY)  # bubblewrap reads the BPF program from it
    binary, *rest = cfg["bwrap"]
    end = rest.index("--")
    # the sandbox's init is a fork of bubblewrap and its command line (/proc/1/cmdline) is readable
    # in the run: the options (host paths of binds and masks) are read from a descriptor instead,
    # and the program is named without its host path -- left are the in-sandbox command
    options_fd = _options_fd([str(seccomp_fd) if a == "@SECCOMP_FD@" else a for a in rest[:end]])
    argv = ["bwrap", "--args", str(options_fd), *rest[end:]]

    def enter() -> None:  # in the child, before bubblewrap starts: join the cgroup, set limits
        for procs in cg["join"]:
            with open(procs, "w") as fh:
                fh.write("0")
        import resource

        for name, value in limits.items():
            res = getattr(resource, f"RLIMIT_{name.upper()}")
            # CPU time: SIGXCPU at the limit (the run's failure can say why), SIGKILL a moment later
            resource.setrlimit(res, (value, value + CPU_GRACE_SECONDS if name == "cpu" else value))

    try:
        return subprocess.Popen(argv, executable=binary, stdin=subprocess.DEVNULL,
                                pass_fds=(*cfg["pass_fds"], seccomp_fd, options_fd), preexec_fn=enter, close_fds=True)
    finally:
        os.close(seccomp_fd)
        os.close(options_fd)


def _frame(fd: int, header: dict[str, Any], content: bytes = b"") -> None:
    head = json.dumps(header).encode()
    os.write(fd, struct.pack(">I", len(head)) + head)
    view = memoryview(content)
    while view:
        n = os.write(fd, view[: 1 << 20])
        view = view[n:]


class TooManyEntries(Exception):
    """The run left more names in its working directory than are listed: nothing is collected."""


def _names(dfd: int, max_entries: int) -> list[str]:
    """The names in the directory ``dfd``, sorted: streamed, never more than ``max_entries`` of
    them held (a million names would cost this process hundreds of megabytes, outside the run's
    memory limit); a directory of more raises :class:`TooManyEntries`."""
    names: list[str] = []
    with os.scandir(dfd) as entries:
        for entry in entries:
            if len(names) == max_entries:
                raise TooManyEntries(f"the run left more than {max_entries} names in its working directory, so "
                                     "its outputs were not collected (keep scratch files in $TMPDIR)")
            names.append(entry.name)
    return sorted(names)


def read_outputs(dfd: int, exclude: set[str], max_files: int, max_file_bytes: int, max_total_bytes: int,
                 skipped: list[str], *, max_entries: int) -> Iterator[tuple[str, bytes]]:
    """The regular files at the top of ``work``, one (name, content) at a time; what is left out
    is named in ``skipped``.  No link is followed, nothing blocks (FIFOs and devices are
    skipped), names and sizes are bounded, and so is the listing (``max_entries`` names, else
    :class:`TooManyEntries` before anything is read): a directory written by hostile code is
    read safely once no process of it is alive.  ``dfd`` is the directory, opened by the caller."""
    count = total = 0
    for name in _names(dfd, max_entries):
        if name in exclude:
            continue
        if not OUTPUT_NAME.fullmatch(name):
            skipped.append(name[:80])
            continue
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
        except OSError:
            skipped.append(name)
            continue
        try:
            st = os.fstat(fd)
            if (not stat.S_ISREG(st.st_mode) or count >= max_files or st.st_size > max_file_bytes
                    or total + st.st_size > max_total_bytes):
                skipped.append(name)
                continue
            chunks, left = [], st.st_size
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            data = b"".join(chunks)
            count += 1
            total += len(data)
        finally:
            os.close(fd)
        yield name, data


def _collect(cfg: dict[str, Any], result_fd: int) -> None:
    """Stream the run's output files to the host, reading as the sandbox user."""
    dfd = os.open(cfg["work"], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    if cfg["mode"] == "root":
        os.setgroups([])
        os.setgid(cfg["gid"])
        os.setuid(cfg["uid"])
    col = cfg["collect"]
    skipped: list[str] = []
    try:
        for name, data in read_outputs(dfd, set(cfg["input_names"]), col["max_files"], col["max_file_bytes"],
                                       col["max_total_bytes"], skipped, max_entries=col["max_entries"]):
            _frame(result_fd, {"file": name, "size": len(data)}, data)
    except TooManyEntries as exc:
        _frame(result_fd, {"output_error": str(exc)})
    if skipped:
        _frame(result_fd, {"skipped": skipped[:20]})


def run(cfg: dict[str, Any]) -> int:
    result_fd, end_fd = cfg["result_fd"], cfg["end_fd"]
    try:
        _private_namespace(cfg["mode"])
        _mount_work(cfg["work"], cfg["disk_mb"])
        _place_inputs(cfg)
        proc = _start(cfg)
    except (OSError, SetupError) as exc:
        _frame(result_fd, {"setup_error": str(exc)})
        return SETUP_FAILED
    status = proc.wait()
    exit_code = 128 - status if status < 0 else status
    # the command is gone; so is everything it started, before the end of the timed region
    all_gone = kill_all(cfg["cgroup"])
    os.write(end_fd, b"e")
    os.close(end_fd)
    _frame(result_fd, {"exit_code": exit_code, "all_gone": all_gone})
    if all_gone:
        _collect(cfg, result_fd)
    return 0


def main() -> int:
    cfg = json.loads(sys.stdin.buffer.read())
    try:
        return run(cfg)
    except Exception as exc:  # never a traceback in the run's stderr: the host reports it
        try:
            _frame(cfg["result_fd"], {"setup_error": f"supervisor: {type(exc).__name__}: {exc}"})
        except OSError:
            pass
        return SETUP_FAILED


if __name__ == "__main__":
    sys.exit(main())
