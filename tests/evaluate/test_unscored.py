"""Grid points where two Dirichlet parts meet with different data (casekit.unscored): listed in
the case_spec and the prompt, left out of every error, so a solver's corner convention never
decides its verdict; every other point is still scored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit import schema, yamlio
from casekit.derive import derive
from casekit.grid import Grid
from casekit.model.source import CaseSource
from casekit.prompts import render
from casekit.scoring import metrics
from casekit.unscored import exclude, scored_mask

REPO = Path(__file__).resolve().parents[2]
CAVITY = REPO / "cases" / "pdeagent-bench" / "navier_stokes" / "navier_stokes_no_exact_lid_driven_cavity.yaml"


def _derived(path: Path):  # type: ignore[no-untyped-def]
    source = CaseSource.from_dict(yamlio.loads(path.read_text()))
    source.path = path
    return derive(source)


def _cavity(lid: str = "1.0", wall: str = "0.0") -> dict:
    """A Stokes cavity on the unit square: the lid (top) moves with ``lid``, the walls with ``wall``."""
    return {
        "id": "stokes_cavity_corner_test", "family": "stokes",
        "domain": {"template": "unit_square"},
        "pde": {"params": {"nu": 1.0}, "forcing": {"f": ["0.0", "0.0"]}},
        "boundary": {"top": {"kind": "dirichlet", "value": [lid, "0.0"]},
                     **{t: {"kind": "dirichlet", "value": [wall, "0.0"]} for t in ("left", "right", "bottom")}},
        "eval_grid": {"nx": 11, "ny": 11},
        "output": {"field": "velocity_magnitude"},
        "evaluation": {"target_metric": "rel_l2_grid", "timeout_sec": 60, "alpha_acc": 10, "alpha_time": 3},
        "calibration": {"cells_across": 8, "degree": 2},
        "reference": {"levels": [{"cells_across": 16, "degree": 2}, {"cells_across": 32, "degree": 2}]},
        "tracks": ["dolfinx"],
    }


def test_a_lid_driven_cavity_lists_its_two_moving_corners_and_the_prompt_says_so() -> None:
    d = _derived(CAVITY)
    spec = d.case_spec()
    assert spec["eval_grid"]["unscored"] == [[0.0, 1.0], [1.0, 1.0]]
    assert schema.validate(spec, "case_spec") == []
    for tier in ("single", "modelspecs"):
        assert "Not scored: the grid points (0, 1), (1, 1) (`eval_grid.unscored`)" in render(spec, "dolfinx", tier)
    mask = scored_mask(spec)
    assert not mask[-1, 0] and not mask[-1, -1] and mask[0, 0] and mask[0, -1]  # (y, x): the top row's ends
    assert int((~mask).sum()) == 2


def test_data_that_agree_where_parts_meet_leave_every_point_scored() -> None:
    """Walls at rest everywhere (no lid): the corners are ordinary points; nor does a case with a
    manufactured solution (continuous data) list any."""
    d = derive(CaseSource.from_dict(_cavity(lid="0.0")))
    assert "unscored" not in d.case_spec()["eval_grid"]
    lid = derive(CaseSource.from_dict(_cavity()))
    assert lid.case_spec()["eval_grid"]["unscored"] == [[0.0, 1.0], [1.0, 1.0]]
    poisson = _derived(REPO / "cases" / "pdeagent-bench" / "poisson" / "poisson_basic.yaml")
    assert "unscored" not in poisson.case_spec()["eval_grid"]


def test_the_corner_convention_does_not_move_the_error() -> None:
    """The committed reference of the cavity with its two top corners flipped to the walls' value
    (the other convention): 0.10 apart on the whole grid, 0 on the scored points."""
    spec = _derived(CAVITY).case_spec()
    ref = np.load(REPO / "datasets/pdeagent-bench-repaired/build/dolfinx/navier_stokes/"
                  "navier_stokes_no_exact_lid_driven_cavity.reference.npz")
    u = {"u": np.array(ref["u"])}
    flipped = {"u": u["u"].copy()}
    flipped["u"][-1, 0], flipped["u"][-1, -1] = 1.0 - flipped["u"][-1, 0], 1.0 - flipped["u"][-1, -1]
    inside = np.isfinite(u["u"])
    assert metrics.rel_l2(flipped, u, inside) > 0.05
    assert metrics.rel_l2(flipped, u, scored_mask(spec)) == 0.0


@settings(max_examples=60, deadline=None)
@given(nx=st.integers(2, 9), ny=st.integers(2, 9), data=st.data())
def test_exclude_removes_exactly_the_listed_grid_points(nx: int, ny: int, data: st.DataObject) -> None:
    grid = Grid(nx, ny, (-1.0, 2.0, 0.5, 1.5))
    picks = data.draw(st.lists(st.tuples(st.integers(0, nx - 1), st.integers(0, ny - 1)), max_size=6, unique=True))
    axes = grid.axes()
    points = [[float(axes["x"][i]), float(axes["y"][j])] for i, j in picks]
    mask = np.ones(grid.shape, dtype=bool)
    out = exclude(mask, grid, points)
    assert int((~out).sum()) == len(picks)
    for i, j in picks:
        assert not out[j, i]
    assert mask.all()  # the input is not changed


def test_a_point_off_the_grid_is_refused() -> None:
    grid = Grid(5, 5, (0.0, 1.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="not a point of the grid"):
        exclude(np.ones(grid.shape, dtype=bool), grid, [[0.1, 0.0]])
    with pytest.raises(ValueError, match="not a point of the grid"):
        exclude(np.ones(grid.shape, dtype=bool), grid, [[2.0, 0.0]])
