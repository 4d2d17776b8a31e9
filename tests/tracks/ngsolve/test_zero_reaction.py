"""A reaction that is identically zero (``0.0*u``: reaction_diffusion_linear_high_frequency of the
imported set) leaves NGSolve's nonlinear form without a trial function; the form is built on the
space, so the case solves (it crashed with "BilinearForm must have Trial- and TestFunction")."""

from __future__ import annotations

from pathlib import Path

import pytest

from casekit.tracks import TRACKS

from ..measure import measured_error

pytestmark = pytest.mark.ngsolve


def test_a_zero_reaction_solves(tmp_path: Path) -> None:
    from casekit import yamlio
    from casekit.derive import derive
    from casekit.model.source import CaseSource

    track = TRACKS.get("ngsolve")
    ok, why = track.status()
    if not ok:
        pytest.skip(f"NGSolve track not usable: {why}")
    repo = Path(__file__).resolve().parents[3]
    src = yamlio.load(repo / "cases" / "pdeagent-bench" / "reaction_diffusion" /
                      "reaction_diffusion_linear_high_frequency.yaml")
    assert src["pde"]["params"]["reaction"] == "0.0*u" and "time" in src["pde"]
    src["eval_grid"] = {"nx": 21, "ny": 21}
    d = derive(CaseSource.from_dict(src))
    settings = {**src["calibration"], "cells_across": 24, "degree": 1}
    time = src["pde"]["time"]
    settings["dt"] = (time["t_end"] - time["t0"]) / 10
    error = measured_error(d, track.solve_directly(d.case_spec(), settings, tmp_path))
    assert error < 0.1, error
