"""Staged runs: started together up to the timed region, then let go one by one."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from casekit.runner.base import Deferred, RunSpec
from casekit.runner.kinds import local
from casekit.runner.limits import Limits

HARNESS = (Path(local.__file__).resolve().parent.parent / "harness_python.py").read_bytes()

pytestmark = pytest.mark.skipif(bool(local.unavailable_reason()), reason="no local sandbox here")


def _spec(solver: str, *, preload: str = "", timeout: float = 30) -> RunSpec:
    inputs = {"harness.py": HARNESS, "solver.py": solver.encode(), "case_spec.json": json.dumps({"n": 1}).encode()}
    env = {"PATH": "/usr/bin:/bin", "CASEKIT_PRELOAD": preload}
    return RunSpec(["/usr/bin/python3", "-s", "harness.py"], inputs, env, Limits(timeout_sec=timeout, memory_mb=512),
                   "harness")


def test_staged_runs_import_in_parallel_and_never_overlap_their_timed_regions(tmp_path: Path) -> None:
    # each run appends its start and end (as seen by the monotonic clock) to its output: the
    # timed regions of a series must be disjoint, and nothing of the submission runs before go
    solver = ("import time\n"
              "def solve(spec):\n"
              "    t0 = time.monotonic(); time.sleep(0.3)\n"
              "    open('span.txt', 'w').write(f'{t0} {time.monotonic()}')\n")
    runner = local.LocalRunner()
    staged = [runner.stage(_spec(solver, preload="json,decimal"), tmp_path / f"r{i}") for i in range(3)]
    for s in staged:
        s.ready()
    time.sleep(0.5)  # a wait between ready and go counts as nothing of the run
    results = [s.go() for s in staged]
    spans = [tuple(map(float, (tmp_path / f"r{i}" / "span.txt").read_text().split())) for i in range(3)]
    assert all(r.exit_code == 0 and r.solve_seconds is not None for r in results)
    assert all(0.3 <= r.solve_seconds < 2.0 for r in results if r.solve_seconds is not None)
    assert spans[0][1] <= spans[1][0] and spans[1][1] <= spans[2][0]
    assert all(r.wall_seconds < 0.5 + r.solve_seconds + 5 for r in results if r.solve_seconds is not None)


def test_a_cancelled_staged_run_never_runs_the_submission(tmp_path: Path) -> None:
    solver = "def solve(spec):\n    open('ran.txt', 'w').write('x')\n"
    s = local.LocalRunner().stage(_spec(solver), tmp_path / "out")
    s.ready()
    s.cancel()
    r = s.go()  # after cancel: the cancelled result, nothing started
    assert r.solve_seconds is None and r.exit_code is None and "cancelled" in " ".join(r.notes)
    assert not (tmp_path / "out" / "ran.txt").exists()


def test_the_timeout_counts_the_run_not_the_wait_for_go(tmp_path: Path) -> None:
    s = local.LocalRunner().stage(_spec("import time\ndef solve(spec):\n    time.sleep(0.2)\n", timeout=3),
                                  tmp_path / "out")
    s.ready()
    time.sleep(3.5)  # longer than the timeout: the run has not started yet
    r = s.go()
    assert r.exit_code == 0 and not r.timed_out
    s = local.LocalRunner().stage(_spec("import time\ndef solve(spec):\n    time.sleep(30)\n", timeout=2),
                                  tmp_path / "late")
    r = s.go()
    assert r.timed_out and r.wall_seconds < 10


def test_a_run_that_dies_before_it_is_ready_reports_its_crash_not_a_timeout(tmp_path: Path) -> None:
    s = local.LocalRunner().stage(_spec("def solve(spec):\n    pass\n", preload="no_such_module_here", timeout=5),
                                  tmp_path / "out")
    s.ready()
    time.sleep(5.5)  # let go after its timeout would have passed, as the last run of a long series is
    # letting go a run that has ended raises no SIGPIPE (PETSc, imported in-process, installs a
    # handler that aborts; the default action kills as well)
    previous = signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        r = s.go()
    finally:
        signal.signal(signal.SIGPIPE, previous)
    assert not r.timed_out and r.exit_code == 1 and "no_such_module_here" in r.stderr
    assert r.solve_seconds is None and r.wall_seconds < 5


def test_a_harness_that_does_not_wait_for_go_is_a_setup_error(tmp_path: Path) -> None:
    # a harness that ignores CASEKIT_GO_FD would run the submission while other runs are timed
    rogue = HARNESS.replace(b'go = int(os.environ.pop("CASEKIT_GO_FD", "-1"))', b"go = -1")
    assert rogue != HARNESS
    spec = _spec("def solve(spec):\n    open('ran.txt', 'w').write('x')\n")
    spec.inputs["harness.py"] = rogue
    r = local.LocalRunner().stage(spec, tmp_path / "out").go()
    assert "staging protocol" in r.setup_error and r.solve_seconds is None


def test_a_series_cut_short_leaves_no_run_behind(tmp_path: Path) -> None:
    from casekit.runner import cgroups

    before = set(local.RUNS_ROOT.glob(f"run-{os.getpid()}-*"))
    runner = local.LocalRunner()
    staged = [runner.stage(_spec("def solve(spec):\n    pass\n"), tmp_path / f"r{i}") for i in range(3)]
    staged[0].ready()
    assert staged[0].go().exit_code == 0
    for s in staged[1:]:
        s.cancel()
    assert set(local.RUNS_ROOT.glob(f"run-{os.getpid()}-*")) == before
    assert not cgroups._LIVE


def test_workers_that_share_a_machine_share_its_cores_for_staging() -> None:
    from casekit.execution import on_shared_machine, staging_width

    cores = len(os.sched_getaffinity(0))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CASEKIT_SHARED_BY", "1")
        assert on_shared_machine(lambda _: staging_width(), 1, None) == cores
        assert on_shared_machine(lambda _: staging_width(), 2 * cores, None) == 1
        mp.setenv("CASEKIT_SHARED_BY", str(2 * cores))  # other casekit processes on this machine
        assert on_shared_machine(lambda _: staging_width(), 1, None) == 1
    on_shared_machine(lambda _: None, 1, None)


def test_runs_without_the_harness_start_at_go(tmp_path: Path) -> None:
    spec = RunSpec(["/bin/sh", "-c", "echo hi"], {}, {"PATH": "/usr/bin:/bin"}, Limits(timeout_sec=30), "wrapper")
    s = local.LocalRunner().stage(spec, tmp_path / "out")
    assert isinstance(s, Deferred)
    assert s.go().stdout.strip() == "hi"
