"""A run's timed region is measured in CPU time as well as wall time (its cgroup's accounting, every
process of the run): what a build projects a refined calibration by, since a busy machine stretches
wall time and not this.  The assertions hold however busy the machine is: a sleep uses no CPU, and
a spin that stops after a second of its own CPU time used at least that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casekit.runner import cgroups
from casekit.runner.base import RunSpec
from casekit.runner.kinds import local
from casekit.runner.limits import Limits

HARNESS = (Path(local.__file__).resolve().parent.parent / "harness_python.py").read_bytes()

pytestmark = pytest.mark.skipif(bool(local.unavailable_reason()), reason="no local sandbox here")


def _run(solver: str, out: Path):  # type: ignore[no-untyped-def]
    inputs = {"harness.py": HARNESS, "solver.py": solver.encode(), "case_spec.json": json.dumps({"n": 1}).encode()}
    spec = RunSpec(["/usr/bin/python3", "-s", "harness.py"], inputs, {"PATH": "/usr/bin:/bin"},
                   Limits(timeout_sec=120, memory_mb=512), "harness")
    return local.LocalRunner().run(spec, out)


def _accounted() -> bool:
    cg = cgroups.manager().create(256, 64, 1.0)
    try:
        return cg.cpu_seconds() is not None
    finally:
        cg.remove()


def test_a_sleeping_timed_region_uses_no_cpu_and_a_spinning_one_does(tmp_path: Path) -> None:
    if not _accounted():
        pytest.skip("this machine's cgroups do not account CPU time")
    sleeping = _run("import time\ndef solve(spec):\n    time.sleep(1.5)\n", tmp_path / "sleep")
    assert sleeping.exit_code == 0 and sleeping.solve_seconds is not None and sleeping.solve_seconds >= 1.5
    assert sleeping.solve_cpu_seconds is not None and sleeping.solve_cpu_seconds < 0.5, sleeping.solve_cpu_seconds
    spinning = _run("import time\ndef solve(spec):\n    t = time.process_time()\n"
                    "    while time.process_time() - t < 1.0:\n        pass\n", tmp_path / "spin")
    assert spinning.exit_code == 0 and spinning.solve_cpu_seconds is not None
    assert spinning.solve_cpu_seconds >= 0.95, spinning.solve_cpu_seconds
