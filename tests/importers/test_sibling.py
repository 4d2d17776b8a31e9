"""Siblings (``casekit.authoring.sibling``): the same problem with a new manufactured solution, of
the record's character, drawn reproducibly from the record's id."""

from __future__ import annotations

import pytest

from casekit.authoring.sibling import character, clean_sibling, recipe, sibling
from casekit.families import FAMILIES
from casekit.validate import check_source


@pytest.mark.parametrize(("solution", "expected"), [
    ({"u": "sin(pi*x)*sin(pi*y)"}, "smooth"),
    ({"u": "exp(-40*((x-0.5)**2+(y-0.5)**2))"}, "peak"),
    ({"u": "exp(x)*cos(2*pi*y)"}, "smooth"),  # exp of a linear argument is no peak
    ({"u": "tanh((x-0.5)/0.05)"}, "front"),
    ({"u": "x**2*y*(1-x)"}, "polynomial"),
    ({"u": "sin(4*pi*x)*cos(pi*y)"}, "oscillatory"),
    ({"u": ["x*y", "sin(6*pi*x)"], "p": "x"}, "oscillatory"),  # every component counts
])
def test_the_character_of_a_solution(solution: dict, expected: str) -> None:
    assert character(solution) == expected


def test_the_recipe_keeps_the_character_and_scales_the_rate_to_the_window() -> None:
    heat = FAMILIES.get("heat")
    r = recipe(heat, "peak", (0.0, 0.05))
    assert r["solution"]["kind"] == "gauss"
    # the nearest horizon level (short: t_end 0.1, rate 5) with rate x horizon kept
    assert r["time"]["t_end"] == 0.05 and r["time"]["rate"] == pytest.approx(10.0)
    assert recipe(FAMILIES.get("stokes"), "peak", None)["solution"]["kind"] == "trig"  # no peak level: default


def _source() -> dict:
    return {
        "id": "heat_sib", "family": "heat", "domain": {"template": "unit_square"},
        "pde": {"params": {"kappa": 1.0}, "time": {"t0": 0.0, "t_end": 0.1, "dt": 0.01},
                "forcing": {"f": "0"}},
        "manufactured_solution": {"u": "exp(-t)*sin(pi*x)*sin(pi*y)"},
        "initial": {"u": "sin(pi*x)*sin(pi*y)"},
        "boundary": {"left": {"kind": "dirichlet", "value": "0"}, "right": "dirichlet", "bottom": "dirichlet",
                     "top": {"kind": "neumann", "value": "0"}},
        "eval_grid": {"nx": 21, "ny": 21}, "output": {"field": "u"},
        "calibration": {"cells_across": 24, "degree": 2, "dt": 0.005}, "tracks": ["dolfinx"],
    }


def test_a_sibling_keeps_the_problem_and_validates_clean() -> None:
    src = _source()
    a, b = sibling(src, "heat_basic", 0), sibling(src, "heat_basic", 0)
    assert a == b  # reproducible from the record's id
    assert sibling(src, "heat_basic", 1)["manufactured_solution"] != a["manufactured_solution"]
    assert sibling(src, "heat_other", 0)["manufactured_solution"] != a["manufactured_solution"]
    assert "forcing" not in a["pde"] and "initial" not in a
    assert a["boundary"] == {"left": "dirichlet", "right": "dirichlet", "bottom": "dirichlet", "top": "neumann"}
    assert a["pde"]["time"] == src["pde"]["time"] and a["pde"]["params"] == src["pde"]["params"]
    assert check_source(src) != []  # the record's own separable solution is refused ...
    clean, attempt = clean_sibling(src, "heat_basic", notes="sibling, draw {attempt}")
    assert clean is not None and check_source(clean) == []  # ... a sibling is not
    assert clean == sibling(src, "heat_basic", attempt) | {"notes": f"sibling, draw {attempt}"}
    assert src["initial"] == {"u": "sin(pi*x)*sin(pi*y)"}  # the input is not changed
