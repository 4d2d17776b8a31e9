"""The inversion battery as submissions: against freshly drawn cases of every transient family and
peak cases, built on DOLFINx, each inverter run through ``casekit evaluate`` (sandboxed, like any
agent's code) gets F-Acc (or F-Exec), while the calibration solver is accurate."""

from __future__ import annotations

from pathlib import Path

import pytest

from casekit import yamlio
from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.runner.limits import Limits
from casekit.solvers.baselines import kinds
from tests.helpers import build_source
from tests.validity.draws import FRESH


@pytest.mark.dolfinx
def test_every_inverter_fails_freshly_drawn_cases_when_evaluated(tmp_path: Path) -> None:
    paths = []
    for i, (family, domain, levels) in enumerate(FRESH):
        src = build_source(family, domain, levels, 9100 + i)
        src["eval_grid"] = {"nx": 33, "ny": 33}
        # the case timeout is the agents' contract, not under test here: at 60 s a loaded 2-core machine
        # timed a coarse burgers calibration out (the runs take seconds when the machine is free)
        src["evaluation"]["timeout_sec"] = 300.0
        path = tmp_path / "cases" / family / f"{src['id']}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yamlio.dumps(src))
        paths.append(path)
    outcomes = build(paths, BuildOptions(tmp_path / "build", "dolfinx", repeats=1, limits=Limits(timeout_sec=300)))
    assert all(o.status == "built" for o in outcomes), [(o.case_id, o.reason) for o in outcomes]
    store = open_store(tmp_path / "build", "dolfinx")
    write_baselines(store, tmp_path / "subs", ("calibration", *kinds()), "dolfinx")
    cal = evaluate(EvalOptions(store, tmp_path / "subs" / "calibration", tmp_path / "eval" / "calibration",
                               repeats=1))
    assert all(v["error"] <= v["tau_acc"] for v in cal), [(v["case_id"], v["stage"]) for v in cal]
    for kind in kinds():
        if not (tmp_path / "subs" / kind).is_dir():
            continue
        verdicts = evaluate(EvalOptions(store, tmp_path / "subs" / kind, tmp_path / "eval" / kind, repeats=1))
        ran = [v for v in verdicts if v.get("failure", {}).get("category") != "missing_submission"]
        assert ran, kind
        assert all(v["stage"] in ("F-Acc", "F-Exec") for v in ran), \
            [(kind, v["case_id"], v["stage"], v.get("error"), v.get("failure")) for v in ran]
        assert any(v["stage"] == "F-Acc" for v in ran), kind  # they ran inside the sandbox and wrote fields
