"""Imported cases that failed every deal.II build, solved coarse by casekit's deal.II program
(each test fails without its fix):

* poisson_star_6pt_poly: its Dirichlet data (a product of twelve edge lines of the star, printed
  with 16-digit rationals) are 24908 characters of muParser text, over muParser's 20000 ("Parsing
  Error ... Expression too long"); they now go as a chain of definitions (solvers/chain.py,
  ``Formula`` in common.cc)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from casekit.tracks import TRACKS

from ..measure import measured_error

pytestmark = pytest.mark.dealii

REPO = Path(__file__).resolve().parents[3]


def _source(family: str, case_id: str) -> dict[str, Any]:
    from casekit import yamlio

    return yamlio.load(REPO / "cases" / "pdeagent-bench" / family / f"{case_id}.yaml")


def _track():  # type: ignore[no-untyped-def]
    from casekit.envs import ENVIRONMENTS

    env = ENVIRONMENTS.get("dealii").check()
    if not env.usable:
        pytest.skip(f"deal.II is not installed here: {env.reason} (casekit env install dealii)")
    track = TRACKS.get("dealii")
    ok, why = track.status()
    assert ok, why
    return track


def test_dirichlet_data_longer_than_muparser_takes_are_solved(tmp_path: Path) -> None:
    from casekit.derive import derive
    from casekit.model.source import CaseSource
    from casekit.tracks.dealii.solvers import settings_json

    track = _track()
    src = _source("poisson", "poisson_star_6pt_poly")
    src["eval_grid"] = {"nx": 21, "ny": 21}
    d = derive(CaseSource.from_dict(src))
    settings = {**src["calibration"], "cells_across": 24}
    value = settings_json(d.case_spec(), settings)["bc"][0]["value"][0]
    assert ":=" in value  # sent as a chain
    error = measured_error(d, track.solve_directly(d.case_spec(), settings, tmp_path))
    assert error < 1e-3, error


#: working imported cases with every expression forced into a chain: time (heat, 3-D with z;
#: wave), u in place of time (a reaction), vector data (elasticity, Stokes), the negated Laplacian
#: (biharmonic), transport (convection-diffusion); cells across and time steps kept coarse
CHAINED = [("heat", "heat_3d_basic_decay", 6, 4),
           ("reaction_diffusion", "reaction_diffusion_rd_circle_logistic", 12, 4),
           ("wave", "wave_annulus_trig", 10, 4), ("linear_elasticity", "linear_elasticity_le_exp_annulus_trig", 10, 0),
           ("stokes", "stokes_test_circle_unit", 10, 0), ("biharmonic", "biharmonic_circle_test_v1", 10, 0),
           ("convection_diffusion", "convection_diffusion_cd_circle_basic_diffdom", 10, 0)]


@pytest.mark.parametrize("family,case_id,cells,steps", CHAINED, ids=[c[1] for c in CHAINED])
def test_a_chain_solves_as_the_one_expression_does(family, case_id, cells, steps, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The same coarse solve with every text over 120 characters sent as a chain of definitions of
    at most 120 (``Formula``'s muParsers) and as one expression (deal.II's FunctionParser): the
    solutions agree to round-off."""
    import numpy as np

    from casekit.derive import derive
    from casekit.model.source import CaseSource
    from casekit.tracks.dealii.solvers import chain, settings_json

    track = _track()
    src = _source(family, case_id)
    src["eval_grid"] = {"nx": 11, "ny": 11, **({"nz": 5} if "nz" in src.get("eval_grid", {}) else {})}
    d = derive(CaseSource.from_dict(src))
    settings = {**src["calibration"], "cells_across": cells}
    if steps:
        time = src["pde"]["time"]
        settings["dt"] = (time["t_end"] - time["t0"]) / steps
    plain = dict(np.load(track.solve_directly(d.case_spec(), settings, tmp_path / "plain")))
    monkeypatch.setattr(chain, "LIMIT", 120)
    monkeypatch.setattr(chain, "BUDGET", 120)
    texts = json.dumps(settings_json(d.case_spec(), settings))
    assert ":=" in texts  # something was chained
    chained = dict(np.load(track.solve_directly(d.case_spec(), settings, tmp_path / "chained")))
    assert plain.keys() == chained.keys()
    for key, value in plain.items():
        scale = max(float(np.nanmax(np.abs(value))), 1e-300)
        assert np.allclose(value, chained[key], rtol=0, atol=1e-9 * scale, equal_nan=True), key
