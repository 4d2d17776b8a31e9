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
from casekit.errors import CasekitError
from casekit.model.source import CaseSource
from casekit.prompts import render
from casekit.scoring import metrics
from casekit.unscored import scored_mask, unscored_points

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


SIDES = ("left", "right", "bottom", "top")
#: the corners of the unit square (x, y) and the two sides meeting there
CORNERS = {(0.0, 0.0): ("left", "bottom"), (1.0, 0.0): ("right", "bottom"),
           (0.0, 1.0): ("left", "top"), (1.0, 1.0): ("right", "top")}


def _square(values: dict[str, float], n: int = 5) -> dict:
    """A case_spec on the unit square with constant Dirichlet data ``values`` on its sides."""
    return {"domain": {"type": "unit_square", "geometry_params": {}}, "pde": {"params": {}},
            "eval_grid": {"type": "uniform", "nx": n, "ny": n, "bbox": [0, 1, 0, 1], "mask_outside": True},
            "bc": {"dirichlet": [{"tag": t, "value": repr(v)} for t, v in values.items()]}}


@settings(max_examples=60, deadline=None)
@given(values=st.fixed_dictionaries({t: st.sampled_from([0.0, 1.0, -0.8, 1e-9]) for t in SIDES}),
       n=st.integers(3, 7))
def test_the_unscored_points_are_the_corners_where_the_sides_disagree(values: dict[str, float], n: int) -> None:
    spec = _square(values, n)
    # a jump counts beside the data's scale (1e-9 against a lid of 1 is no ambiguity; alone, it is)
    scale = max(abs(v) for v in values.values())
    expected = sorted([list(c) for c, (a, b) in CORNERS.items() if abs(values[a] - values[b]) > 1e-8 * scale])
    assert unscored_points(spec) == expected
    if expected:
        spec["eval_grid"]["unscored"] = expected
    mask = scored_mask(spec)
    assert int((~mask).sum()) == len(expected)
    for x, y in expected:
        assert not mask[round(y * (n - 1)), round(x * (n - 1))]  # (y, x)


def test_a_forged_or_malformed_list_is_refused_by_name() -> None:
    """The evaluator recomputes the points: a list that leaves out more (every point, here), one
    that misses a corner, a point of the wrong dimension and an empty data set are each refused
    with the field named -- never a traceback, never an empty score."""
    spec = _square({"left": 0.0, "right": 0.0, "bottom": 0.0, "top": 1.0})
    grid_points = [[x / 4, y / 4] for x in range(5) for y in range(5)]
    for listed in (grid_points, [[0.0, 1.0]], [[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]], "corners", None):
        spec["eval_grid"]["unscored"] = listed
        with pytest.raises(CasekitError, match=r"eval_grid\.unscored") as info:
            scored_mask(spec, "stokes_forged")
        assert info.value.pointer == "/eval_grid/unscored" and info.value.case_id == "stokes_forged"
    corners = _square({"left": 0.0, "right": 0.0, "bottom": 1.0, "top": 1.0}, n=2)  # a grid of corners only
    corners["eval_grid"]["unscored"] = unscored_points(corners)
    with pytest.raises(CasekitError, match="no grid point inside the domain is scored"):
        scored_mask(corners)
    agree = _square({t: 0.0 for t in SIDES})
    agree["eval_grid"]["unscored"] = [[0.0, 1.0]]
    with pytest.raises(CasekitError, match=r"eval_grid\.unscored"):
        scored_mask(agree)


def test_the_edges_of_a_cube_under_a_moving_lid_are_unscored_in_z_y_x_order() -> None:
    spec = {"domain": {"type": "unit_cube", "geometry_params": {}}, "pde": {"params": {}},
            "eval_grid": {"type": "uniform", "nx": 4, "ny": 5, "nz": 3, "bbox": [0, 1, 0, 1, 0, 1],
                          "mask_outside": True},
            "bc": {"dirichlet": [{"tag": t, "value": ["1.0" if t == "top" else "0", "0", "0"]}
                                 for t in ("left", "right", "front", "back", "bottom", "top")]}}
    points = unscored_points(spec)
    # the top face's four edges: 2 x 4 points along x and 2 x 5 along y, the 4 corners once
    assert len(points) == 2 * 4 + 2 * 5 - 4
    top = max(p[2] for p in points)
    assert all(p[2] == top for p in points)
    spec["eval_grid"]["unscored"] = points
    mask = scored_mask(spec)
    assert mask.shape == (3, 5, 4) and not mask[-1, 0, :].any() and not mask[-1, :, 0].any() and mask[-1, 2, 2]
    assert int((~mask).sum()) == len(points)
