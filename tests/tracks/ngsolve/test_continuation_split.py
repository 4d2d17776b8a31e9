"""NGSolve's Navier-Stokes continuation splits a viscosity step where Newton diverges:
navier_stokes_no_exact_counter_shear_open_sides (nu 0.2, two open sides) diverged from nu 0.8 to
0.2 and failed every build; with the step split (0.8 -> 0.4 -> 0.2) it converges, at the record's
resolution (error 2.9e-5, DOLFINx's e_base 9.6e-5) and coarse, as here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casekit.tracks import TRACKS

from ..measure import measured_error

pytestmark = pytest.mark.ngsolve


def test_a_diverging_continuation_step_is_split(tmp_path: Path) -> None:
    from casekit import yamlio
    from casekit.derive import derive
    from casekit.model.source import CaseSource

    track = TRACKS.get("ngsolve")
    ok, why = track.status()
    if not ok:
        pytest.skip(f"NGSolve track not usable: {why}")
    repo = Path(__file__).resolve().parents[3]
    src = yamlio.load(repo / "cases" / "pdeagent-bench" / "navier_stokes" /
                      "navier_stokes_no_exact_counter_shear_open_sides.yaml")
    src["eval_grid"] = {"nx": 21, "ny": 21}
    d = derive(CaseSource.from_dict(src))
    settings = {**src["calibration"], "cells_across": 20, "degree": 2}
    error = measured_error(d, track.solve_directly(d.case_spec(), settings, tmp_path))
    info = json.loads((tmp_path / "meta.json").read_text())["solver_info"]
    assert info["continuation_levels"] > 3, info  # 1.0, 0.8 and 0.2 would not converge: a level was inserted
    assert error < 0.01, error
