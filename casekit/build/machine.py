"""The machine and software a result was measured on (recorded with every t_base)."""

from __future__ import annotations

import os
import platform
from functools import cache
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
