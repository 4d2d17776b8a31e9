"""deal.II's calibration solves a 3-D symmetric positive definite system (diffusion, no transport,
a non-negative reaction) by SSOR-preconditioned CG instead of factorising it -- a 3-D P2
factorisation took 25x DOLFINx's Krylov solve (docs/scaling.md).  CG must give the factorisation's
field (steady and transient: the same error to 1e-8), and Helmholtz (indefinite) keeps the
factorisation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import casekit.tracks.dealii.solvers as dealii_solvers
from casekit.tracks import TRACKS

from ..measure import measured_error

pytestmark = pytest.mark.dealii


def _solve(family: str, levels: dict[str, str], tmp: Path) -> tuple[float, dict[str, Any]]:
    """A P2 solve on the unit cube at 6 cells across: its error and the program's solver info."""
    from casekit.derive import derive
    from casekit.model.source import CaseSource
    from tests.helpers import build_source

    track = TRACKS.get("dealii")
    ok, why = track.status()
    if not ok:
        pytest.skip(f"deal.II track not usable: {why}")
    src = build_source(family, "unit_cube", levels, seed=1)
    src["eval_grid"] = {"nx": 13, "ny": 13, "nz": 13}
    d = derive(CaseSource.from_dict(src))
    settings = {**src["calibration"], "degree": 2, "cells_across": 6}
    settings.pop("stabilization", None)
    error = measured_error(d, track.solve_directly(d.case_spec(), settings, tmp))
    return error, json.loads((tmp / "meta.json").read_text())["solver_info"]


def _factorised(monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings say the system is not SPD: the program factorises it."""
    scalar = dealii_solvers._scalar

    def not_spd(**kw: Any) -> dict[str, Any]:
        return {**scalar(**kw), "spd": False}

    monkeypatch.setattr(dealii_solvers, "_scalar", not_spd)


@pytest.mark.parametrize(("family", "levels"), [("poisson", {"bc": "mixed"}), ("heat", {})])
def test_a_3d_spd_system_solved_by_cg_is_the_factorisation_s(family: str, levels: dict[str, str], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    e_cg, info = _solve(family, levels, tmp_path / "cg")
    assert info.get("linear_iterations", 0) > 0 and not info.get("krylov_fallbacks"), info
    _factorised(monkeypatch)
    e_lu, info_lu = _solve(family, levels, tmp_path / "lu")
    assert not info_lu.get("linear_iterations"), info_lu
    assert abs(e_cg - e_lu) <= 1e-8 * e_lu, (e_cg, e_lu)


def test_an_indefinite_3d_system_keeps_the_factorisation(tmp_path: Path) -> None:
    _, info = _solve("helmholtz", {}, tmp_path)
    assert not info.get("linear_iterations"), info
