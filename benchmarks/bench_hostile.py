"""Hostile case sources, timed (printed, never asserted): issue 27 asks that each get one line and
exit status 1 within 5 s and 2 GB.

For each of the three sources of ``tests.helpers.hostile_sources`` (a power-9 manufactured
solution, a 2000 x 2000 evaluation grid, a 5000-digit integer) it runs ``casekit validate`` in a
fresh process under a 2 GiB address-space limit and prints the exit status, the wall and CPU
seconds, the peak resident memory and the first line of the answer.  Wall time includes the
interpreter's start and casekit's imports (about 2 s); on a loaded machine compare CPU seconds.

    python benchmarks/bench_hostile.py
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import hostile_sources  # noqa: E402

LIMIT = 2 << 30


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def run(path: Path) -> tuple[int, float, float, int, str]:
    """(exit status, wall s, CPU s, peak RSS MiB, first line) of ``casekit validate path``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "casekit.cli", "validate", str(path)], cwd=path.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=_limit)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here, with its own resource usage
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    first = next((line for line in out.splitlines() if line.strip()), "")
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, first


def main() -> None:
    print(f"casekit validate on hostile sources, under a {LIMIT >> 30} GiB address-space limit")
    print(f"{'source':14} {'exit':>4} {'wall s':>7} {'CPU s':>6} {'peak MiB':>8}  first line")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in hostile_sources().items():
            path = Path(tmp) / "cases" / "poisson" / f"poisson_{name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            code, wall, cpu, peak, first = run(path)
            print(f"{name:14} {code:>4} {wall:7.2f} {cpu:6.2f} {peak:8d}  {first[:160]}")


if __name__ == "__main__":
    main()
