"""Executors: the local pool and Dask give the same records and verdicts; results arrive in the
caller as they finish; an error stops the rest; bad options are usage errors."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest

from casekit.build.run import build
from casekit.errors import CasekitError, UsageError
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.executors import EXECUTORS, ExecutorOptions, make
from tests.build.test_build import coarse, opts, write_case


def _square(x: int) -> int:
    time.sleep(0.05 * (x % 3))
    return x * x


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise CasekitError("three is not allowed", valid="anything else")
    return x


@pytest.mark.parametrize("kind", ["local", "dask"])
def test_results_arrive_in_the_caller_and_errors_stop_the_run(kind: str) -> None:
    pytest.importorskip("distributed")
    ex = make(ExecutorOptions(kind=kind, jobs=2))
    got: dict[int, int] = {}
    ex.run(_square, list(range(6)), lambda item, r: got.__setitem__(item, r))
    assert got == {i: i * i for i in range(6)}
    with pytest.raises(CasekitError, match="three"):
        ex.run(_fail_on_three, list(range(6)), lambda item, r: None)


def test_unknown_executors_and_thread_hungry_workers_are_usage_errors() -> None:
    with pytest.raises(CasekitError, match="unknown executor"):
        EXECUTORS.get("slurm")

    class Client:
        def scheduler_info(self) -> dict:
            return {"workers": {"tcp://a:1": {"nthreads": 1}, "tcp://b:2": {"nthreads": 4}}}

    from casekit.executors.dask import DaskExecutor

    with pytest.raises(UsageError, match="--nthreads 1"):
        DaskExecutor.check_workers(Client())


@pytest.mark.dolfinx
def test_dask_gives_the_records_and_verdicts_of_the_local_pool(tmp_path: Path) -> None:
    """Three cases built and evaluated (calibration and zero baselines) locally and on a Dask
    LocalCluster of two workers: the same records (but for times) and the same verdicts."""
    pytest.importorskip("distributed")
    paths = [write_case(tmp_path, coarse(f, d, **lv)) for f, d, lv in
             (("poisson", "l_shape", {"bc": "mixed"}), ("heat", "unit_square", {"bc": "dirichlet"}),
              ("linear_elasticity", "circle", {}))]
    results = {}
    for kind in ("local", "dask"):
        root = tmp_path / kind
        outcomes = build(paths, opts(root / "build"), executor=ExecutorOptions(kind=kind, jobs=2))
        assert all(o.status == "built" for o in outcomes), [(o.case_id, o.reason) for o in outcomes]
        store = open_store(root / "build", "dolfinx")
        write_baselines(store, root / "base", ("calibration", "zero"), "dolfinx")
        verdicts = evaluate(EvalOptions(store, [root / "base" / "calibration", root / "base" / "zero"],
                                        root / "out", repeats=1, executor=ExecutorOptions(kind=kind, jobs=2)))
        records = {r["id"]: r for r in map(json.loads, (root / "build" / "dolfinx" / "records.jsonl").open())}
        results[kind] = (records, verdicts)
    (local_records, local_verdicts), (dask_records, dask_verdicts) = results["local"], results["dask"]
    assert set(local_records) == set(dask_records) and len(local_records) == 3

    def stable(r: dict) -> tuple:
        meta = r["evaluation_metadata"]
        return (r["case_spec"], r["public_id"], meta["e_base"], meta["thresholds"]["tau_acc"])

    for cid in local_records:
        assert stable(local_records[cid]) == stable(dask_records[cid])

    def key(v: dict) -> tuple:
        return (v["system"], v["case_id"], v["attempt"], v["stage"], v["error"], (v["failure"] or {}).get("category"))

    assert sorted(map(key, local_verdicts)) == sorted(map(key, dask_verdicts))
    assert {v["stage"] for v in dask_verdicts if v["system"] == "zero"} == {"F-Acc"}


def test_a_local_process_pool_returns_results_and_errors_in_the_caller() -> None:
    ex = make(ExecutorOptions(kind="local", jobs=2, processes=True))
    got: dict[int, int] = {}
    ex.run(_square, list(range(6)), lambda item, r: got.__setitem__(item, r))
    assert got == {i: i * i for i in range(6)}
    with pytest.raises(CasekitError, match="three"):
        ex.run(_fail_on_three, list(range(6)), lambda item, r: None)


def _hold(item: tuple[str, float]) -> tuple[float, float]:
    from casekit.build.run import TimingLock

    path, seconds = item
    with TimingLock(Path(path)):
        t0 = time.monotonic()
        time.sleep(seconds)
        return t0, time.monotonic()


def test_the_timing_lock_serialises_processes_and_threads(tmp_path: Path) -> None:
    """The worker processes of one local build time their runs one at a time."""
    lock = str(tmp_path / ".timing.lock")
    spans: list[tuple[float, float]] = []
    for processes in (True, False):
        make(ExecutorOptions(kind="local", jobs=3, processes=processes)).run(
            _hold, [(lock, 0.2)] * 4, lambda item, span: spans.append(span))
    for run in (spans[:4], spans[4:]):
        run.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(run))


def _die_on_one(x: int) -> int:
    if x == 1:
        import os

        os._exit(9)  # a worker killed (out of memory, a crash in a library)
    time.sleep(0.5)
    return x


def test_a_worker_that_dies_ends_the_build_at_once() -> None:
    """A broken process pool is a clear error in the caller, promptly (every other worker is
    terminated, never left running queued cases or hanging the shutdown)."""
    t0 = time.monotonic()
    with pytest.raises(CasekitError, match="worker process died"):
        make(ExecutorOptions(kind="local", jobs=2, processes=True)).run(_die_on_one, list(range(8)),
                                                                         lambda item, r: None)
    assert time.monotonic() - t0 < 30
