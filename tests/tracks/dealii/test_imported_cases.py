"""Imported cases that failed every deal.II build, solved coarse by casekit's deal.II program
(each test fails without its fix):

* poisson_star_6pt_poly: its Dirichlet data (a product of twelve edge lines of the star, printed
  with 16-digit rationals) are 24908 characters of muParser text, over muParser's 20000 ("Parsing
  Error ... Expression too long"); they now go as a chain of definitions (solvers/chain.py,
  ``Formula`` in common.cc)."""

from __future__ import annotations

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
