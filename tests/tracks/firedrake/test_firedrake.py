"""The Firedrake track: casekit's Firedrake solvers converge at the theoretical rate on straight
and curved domains (curved cells from the registry's circles), and a case built with both the
DOLFINx and Firedrake tracks agrees across them and passes the evaluator with the calibration.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from casekit import yamlio
from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.evaluate.baselines import calibration_settings
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS
from tests.helpers import build_source

pytestmark = pytest.mark.firedrake



@pytest.fixture(scope="module")
def track():  # type: ignore[no-untyped-def]
    from casekit.envs import ENVIRONMENTS

    env = ENVIRONMENTS.get("firedrake").check()
    if not env.usable:
        pytest.skip(f"Firedrake is not installed here: {env.reason} (casekit env install firedrake)")
    return TRACKS.get("firedrake")



def test_built_with_both_tracks_they_agree_and_the_calibration_passes_the_evaluator(track, tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = build_source("poisson", "annulus", {"bc": "mixed"}, 5)
    src["eval_grid"] = {"nx": 25, "ny": 25}
    src["calibration"] = {**src["calibration"], "cells_across": 20}
    src["evaluation"]["timeout_sec"] = 60.0
    src["tracks"] = ["dolfinx", "firedrake"]
    path = tmp_path / "cases" / "poisson" / f"{src['id']}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yamlio.dumps(src))
    for name in ("dolfinx", "firedrake"):
        [o] = build([path], BuildOptions(tmp_path / "build", name, repeats=1, limits=Limits(timeout_sec=600)))
        assert o.status == "built", o.reason
    status = json.loads((tmp_path / "build" / "firedrake" / src["id"] / "status.json").read_text())
    assert status["agreement"]["dolfinx"]["distance"] <= status["agreement"]["dolfinx"]["bound"]

    store = open_store(tmp_path / "build", "firedrake")
    record = store.records[src["id"]]
    sub = tmp_path / "subs" / src["id"]
    sub.mkdir(parents=True)
    for name, data in track.calibration_submission(calibration_settings(record), record["case_spec"]).items():
        (sub / name).write_bytes(data)
    [v] = evaluate(EvalOptions(store=store, submissions=tmp_path / "subs", out=tmp_path / "out", track="firedrake",
                               repeats=1))
    assert v["stage"] == "Pass", v


def test_the_periodic_snippet_of_the_guide_runs(tmp_path: Path) -> None:
    """The guide's code blocks run as written in the Firedrake environment (the periodic square
    included) and the periodic solution matches its partner values."""
    import re
    import textwrap

    text = TRACKS.get("firedrake").resource("guide.md").read_text()
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, re.S)]
    assert any("PeriodicRectangleMesh" in b for b in blocks)
    check = ("\nimport numpy as np\n"
             "ev = fd.PointEvaluator(mesh, np.array([[1e-9, 0.37], [1 - 1e-9, 0.37], [0.25, 0.5]]))\n"
             "left, right, mid = ev.evaluate(uh)\n"
             "assert abs(left - right) < 1e-6 and abs(mid) > 1e-3, (left, right, mid)\n"
             "print('PERIODIC OK')\n")
    from tests.prompts.guides import template_case

    # the guide's blocks read the case_spec solve() gets (a unit square's, as its examples use)
    setup = f"import json\ncase_spec = json.loads({json.dumps(json.dumps(template_case('unit_square')))})\n"
    script = tmp_path / "guide.py"
    script.write_text(setup + "\n".join(blocks) + check)
    python = TRACKS.get("firedrake").python()  # type: ignore[attr-defined]
    r = subprocess.run([str(python), str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                       env={**os.environ, "OMP_NUM_THREADS": "1", "HOME": str(tmp_path)})
    assert "PERIODIC OK" in r.stdout, r.stderr[-3000:]
