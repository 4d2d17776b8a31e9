"""Per-run control groups: the limits that hold per run, not per process or per user.

Every local run gets its own cgroup with a memory limit (which also counts the pages of the
run's tmpfs scratch and working directory), a process limit and a CPU quota, so forks and
scratch files cannot take more than the run's share and concurrent runs (``--jobs N``) cannot
starve each other.  Both cgroup versions are supported:

* **v2** (the unified hierarchy, most current hosts): as root, runs live under
  ``<mount>/casekit/``; without root, under the evaluator's own cgroup when it is delegated to
  the user (``systemd-run --user --scope -p Delegate=yes casekit evaluate ...``).
* **v1** (separate ``memory``, ``pids``, ``cpu`` hierarchies; root only): runs live under the
  evaluator's own cgroup in each hierarchy, so a limit set on the evaluator still applies.

When neither is usable the local runner refuses to run untrusted code (no weaker fallback).
"""

from __future__ import annotations

import atexit
import itertools
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from casekit.runner.supervisor import kill_all, members

#: the controllers a run needs (cpu is used when present)
REQUIRED = ("memory", "pids")
_COUNTER = itertools.count()
_LIVE: set[RunCgroup] = set()
_LIVE_LOCK = threading.Lock()


class CgroupUnavailable(Exception):
    pass


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fstype, options) of every cgroup mount."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
            out.append((fields[4], rfields[0], set(rfields[2].split(","))))
    return out


def _own_paths() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's cgroup path."""
    out: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            out[""] = path
        for c in controllers.split(","):
            if c:
                out[c] = path
    return out


@dataclass(eq=False)
class RunCgroup:
    """One run's cgroup (one directory per v1 hierarchy, one in v2)."""

    version: int
    dirs: dict[str, Path]  # controller ("" for v2) -> directory
    removed: bool = field(default=False)

    def to_supervisor(self) -> dict[str, Any]:
        kill_dir = self.dirs[""] if self.version == 2 else self.dirs["pids"]
        return {"version": self.version, "join": [str(d / "cgroup.procs") for d in self.dirs.values()],
                "kill_dirs": [str(kill_dir)]}

    def members(self) -> list[int]:
        return members(self.to_supervisor())

    def kill(self) -> bool:
        return kill_all(self.to_supervisor())

    def _read(self, controller: str, name: str) -> str | None:
        d = self.dirs.get("" if self.version == 2 else controller)
        try:
            return (d / name).read_text() if d is not None else None
        except OSError:
            return None

    def oom_killed(self) -> bool:
        text = self._read("memory", "memory.events" if self.version == 2 else "memory.oom_control") or ""
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                return True
        if self.version == 1:  # kernels without the oom_kill counter: a hit limit
            fail = self._read("memory", "memory.failcnt")
            return bool(fail and fail.strip().isdigit() and int(fail) > 0 and "oom_kill " not in text)
        return False

    def cpu_seconds(self) -> float | None:
        """The CPU time the run's processes have used so far (all of them, children included), or
        None where this machine's cgroups do not account it: unlike wall time, a busy machine does
        not stretch it."""
        if self.version == 2:
            for line in (self._read("", "cpu.stat") or "").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec" and value.strip().isdigit():
                    return int(value) / 1e6
            return None
        for controller in ("cpuacct", "cpu"):  # cpuacct, or mounted with cpu as "cpu,cpuacct"
            text = self._read(controller, "cpuacct.usage")
            if text and text.strip().isdigit():
                return int(text) / 1e9
        return None

    def peak_memory(self) -> int | None:
        text = self._read("memory", "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes")
        return int(text) if text and text.strip().isdigit() else None

    def remove(self) -> None:
        if self.removed:
            return
        self.kill()
        for d in self.dirs.values():
            for _ in range(200):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        self.removed = True
        with _LIVE_LOCK:
            _LIVE.discard(self)


class Manager:
    """Creates run cgroups under a base directory per controller."""

    def __init__(self, version: int, bases: dict[str, Path], has_cpu: bool, how: str) -> None:
        self.version, self.bases, self.has_cpu, self.how = version, bases, has_cpu, how

    def create(self, memory_mb: int, pids: int, cpus: float) -> RunCgroup:
        name = f"run-{os.getpid()}-{next(_COUNTER)}-{secrets.token_hex(3)}"
        dirs = {c: b / name for c, b in self.bases.items()}
        cg = RunCgroup(self.version, dirs)
        for d in dirs.values():
            d.mkdir()
        with _LIVE_LOCK:
            _LIVE.add(cg)
        try:
            self._limit(cg, memory_mb, pids, cpus)
        except OSError as exc:
            cg.remove()
            raise CgroupUnavailable(f"cannot set the run's limits: {exc}") from exc
        return cg

    def _limit(self, cg: RunCgroup, memory_mb: int, pids: int, cpus: float) -> None:
        mem = memory_mb * 1024 * 1024
        quota = max(1000, int(cpus * 100_000))
        if self.version == 2:
            d = cg.dirs[""]
            (d / "memory.max").write_text(str(mem))
            if (d / "memory.swap.max").exists():
                (d / "memory.swap.max").write_text("0")
            if (d / "memory.oom.group").exists():
                (d / "memory.oom.group").write_text("1")
            (d / "pids.max").write_text(str(pids))
            if self.has_cpu:
                (d / "cpu.max").write_text(f"{quota} 100000")
            return
        m = cg.dirs["memory"]
        (m / "memory.limit_in_bytes").write_text(str(mem))
        if (m / "memory.memsw.limit_in_bytes").exists():
            try:
                (m / "memory.memsw.limit_in_bytes").write_text(str(mem))
            except OSError:
                pass  # no swap accounting on this kernel: nothing to limit
        (cg.dirs["pids"] / "pids.max").write_text(str(pids))
        if self.has_cpu:
            (cg.dirs["cpu"] / "cpu.cfs_period_us").write_text("100000")
            (cg.dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(quota))

    def sweep(self) -> None:
        """Remove run cgroups left by evaluators that died (empty, owner gone)."""
        for base in self.bases.values():
            try:
                entries = list(base.iterdir())
            except OSError:
                continue
            for d in entries:
                parts = d.name.split("-")
                if not (d.is_dir() and len(parts) == 4 and parts[0] == "run" and parts[1].isdigit()):
                    continue
                if Path(f"/proc/{parts[1]}").exists():
                    continue
                try:
                    if not (d / "cgroup.procs").read_text().split():
                        d.rmdir()
                except OSError:
                    pass


def _v2(mount: str, root: bool) -> Manager:
    m = Path(mount)
    available = set((m / "cgroup.controllers").read_text().split())
    missing = [c for c in REQUIRED if c not in available]
    if missing:
        raise CgroupUnavailable(f"cgroup v2 at {mount} lacks the {', '.join(missing)} controller(s)")
    wanted = [c for c in (*REQUIRED, "cpu") if c in available]
    if root:
        base = m / "casekit"
        _enable(m, wanted)
        base.mkdir(exist_ok=True)
        _enable(base, wanted)
        return Manager(2, {"": base}, "cpu" in wanted, f"cgroup v2 at {base}")
    own = m / _own_paths().get("", "/").lstrip("/")
    if not os.access(own, os.W_OK) or not os.access(own / "cgroup.subtree_control", os.W_OK):
        raise CgroupUnavailable(f"this process's cgroup {own} is not delegated to the user (run as root, or under "
                                "`systemd-run --user --scope -p Delegate=yes ...`)")
    own_controllers = set((own / "cgroup.controllers").read_text().split())
    missing = [c for c in REQUIRED if c not in own_controllers]
    if missing:
        raise CgroupUnavailable(f"the delegated cgroup {own} lacks the {', '.join(missing)} controller(s)")
    # cgroup v2's rule: processes live only in leaves; move this process into one first
    leaf = own / "casekit-evaluator"
    leaf.mkdir(exist_ok=True)
    (leaf / "cgroup.procs").write_text(str(os.getpid()))
    wanted = [c for c in wanted if c in own_controllers]
    _enable(own, wanted)
    base = own / "casekit-runs"
    base.mkdir(exist_ok=True)
    _enable(base, wanted)
    return Manager(2, {"": base}, "cpu" in wanted, f"delegated cgroup v2 at {base}")


def _enable(d: Path, controllers: list[str]) -> None:
    have = set((d / "cgroup.subtree_control").read_text().split())
    for c in controllers:
        if c not in have:
            try:
                (d / "cgroup.subtree_control").write_text(f"+{c}")
            except OSError as exc:
                raise CgroupUnavailable(f"cannot enable the {c} controller in {d}: {exc}") from exc


def _v1(mounts: list[tuple[str, str, set[str]]]) -> Manager:
    own = _own_paths()
    bases: dict[str, Path] = {}
    for controller in (*REQUIRED, "cpu", "cpuacct"):  # cpuacct: CPU time accounting only, no limit
        mount = next((mp for mp, fs, opts in mounts if fs == "cgroup" and controller in opts), None)
        if mount is None:
            if controller in REQUIRED:
                raise CgroupUnavailable(f"no cgroup v1 {controller} hierarchy is mounted")
            continue
        base = Path(mount) / own.get(controller, "/").lstrip("/") / "casekit"
        if base in bases.values():  # one hierarchy for several controllers ("cpu,cpuacct")
            continue
        try:
            base.mkdir(exist_ok=True)
        except OSError as exc:
            raise CgroupUnavailable(f"cannot create {base}: {exc}") from exc
        bases[controller] = base
    return Manager(1, bases, "cpu" in bases, "cgroup v1 (" + ", ".join(f"{c} at {b}" for c, b in bases.items()) + ")")


@cache
def manager() -> Manager:
    """The cgroup manager of this machine (cached); raises :class:`CgroupUnavailable` with why."""
    root = os.geteuid() == 0
    mounts = _mounts()
    errors = []
    for mount, fstype, _ in mounts:
        if fstype == "cgroup2":
            try:
                mgr = _v2(mount, root)
                mgr.sweep()
                return mgr
            except (CgroupUnavailable, OSError) as exc:
                errors.append(str(exc))
    if root and any(fs == "cgroup" for _, fs, _ in mounts):
        try:
            mgr = _v1(mounts)
            mgr.sweep()
            return mgr
        except (CgroupUnavailable, OSError) as exc:
            errors.append(str(exc))
    if not mounts:
        errors.append("no cgroup file system is mounted")
    elif not root and not any(fs == "cgroup2" for _, fs, _ in mounts):
        errors.append("cgroup v1 needs root")
    raise CgroupUnavailable("; ".join(errors))


def kill_live() -> None:
    """Kill and remove every run cgroup this process still has (at exit or on interrupt)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for cg in live:
        cg.remove()


atexit.register(kill_live)  # a run left behind (a staged one never let go) ends with its caller
