"""The machine and software a result was measured on (recorded with every t_base)."""

from __future__ import annotations

import os
import platform
from functools import cache
from pathlib import Path
from typing import Any

from casekit import __version__


@cache
def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu_model": cpu, "cpu_count": os.cpu_count() or 1, "platform": platform.platform(),
            "python": platform.python_version()}


def machine_label() -> str:
    m = machine()
    return f"{m['cpu_model'] or 'unknown CPU'} ({m['cpu_count']} CPUs, {m['platform']})"


def environment(track_name: str, versions: dict[str, str]) -> dict[str, Any]:
    return {"casekit_version": __version__, "track": track_name, "libraries": dict(sorted(versions.items())),
            **machine()}


def available_memory_mb() -> int | None:
    """The memory this process can still have, in MiB: the kernel's ``MemAvailable``, or less
    where its memory cgroup (v2 or v1) or one above it has a lower limit; None where neither can
    be read."""
    found: list[int] = []
    lines: list[str] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) // 1024)
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except (OSError, ValueError):
        pass
    for line in lines:
        _, controllers, rel = line.split(":", 2)
        if controllers == "":  # v2
            root, files = Path("/sys/fs/cgroup"), ("memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            root, files = Path("/sys/fs/cgroup/memory"), ("memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        group = root / rel.strip().lstrip("/")
        for d in (group, *[q for q in group.parents if q == root or root in q.parents]):
            try:
                limit, used = ((d / f).read_text().strip() for f in files)
                if limit != "max" and int(limit) < 1 << 60:
                    found.append(max(0, int(limit) - int(used)) >> 20)
            except (OSError, ValueError):
                pass
    return min(found) if found else None
