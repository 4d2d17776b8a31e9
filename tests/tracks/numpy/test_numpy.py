"""The numpy track end to end: a case built with it, its calibration passes the evaluator
(the shared coverage and convergence tests run for every registered track, this one included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from casekit import yamlio
from casekit.authoring.builder import build_source
from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.runner.limits import Limits

pytestmark = pytest.mark.numpy


def test_a_case_builds_and_its_calibration_passes(tmp_path: Path) -> None:
    src = build_source("poisson", "unit_square", {"bc": "dirichlet"}, 3)
    src["eval_grid"] = {"nx": 21, "ny": 21}
    src["calibration"] = {"cells_across": 24}
    src["evaluation"]["timeout_sec"] = 60.0
    src["tracks"] = ["numpy"]
    path = tmp_path / "cases" / "poisson" / f"{src['id']}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yamlio.dumps(src))
    [outcome] = build([path], BuildOptions(tmp_path / "build", "numpy", repeats=1, limits=Limits(timeout_sec=120)))
    assert outcome.status == "built", outcome.reason
    store = open_store(tmp_path / "build", "numpy")
    write_baselines(store, tmp_path / "base", ("calibration", "zero"), "numpy")
    [v] = evaluate(EvalOptions(store, tmp_path / "base" / "calibration", tmp_path / "out", track="numpy",
                               repeats=1))
    assert v["stage"] in ("Pass", "F-Time") and v["error"] <= v["tau_acc"], v
    [z] = evaluate(EvalOptions(store, tmp_path / "base" / "zero", tmp_path / "out-zero", track="numpy",
                               repeats=1))
    assert z["stage"] == "F-Acc"
