"""The DOLFINx calibration solvers converge at the theoretical rate (observed order within 0.3).

Errors are measured the way the evaluator measures them: relative L2 on the evaluation grid
against the manufactured solution.  Transient cases refine the time step with the mesh.
"""

from __future__ import annotations

import pytest

from .measure import assert_observed_order

pytestmark = pytest.mark.dolfinx

# family, domain, design levels, degree, (coarse, fine) cells across, expected order
CASES = [
    ("poisson", "unit_square", {"bc": "robin"}, 2, (10, 20), 3),
    ("poisson", "annulus", {"bc": "mixed", "coefficient": "variable"}, 2, (16, 32), 3),
    ("helmholtz", "unit_square", {"bc": "mixed"}, 2, (12, 24), 3),
    ("helmholtz", "circle", {"bc": "robin"}, 2, (16, 32), 3),
    ("biharmonic", "unit_square", {}, 2, (10, 20), 3),
    ("biharmonic", "circle", {}, 2, (10, 20), 3),
    ("linear_elasticity", "unit_square", {"bc": "mixed"}, 2, (8, 16), 3),
    ("linear_elasticity", "annulus", {}, 2, (16, 32), 3),
    ("heat", "unit_square", {"bc": "mixed"}, 1, (10, 20), 2),
    ("heat", "circle", {"bc": "robin"}, 1, (10, 20), 2),
    ("convection_diffusion", "unit_square", {"bc": "mixed"}, 2, (10, 20), 3),
    ("convection_diffusion", "annulus", {"time": "transient"}, 1, (10, 20), 2),
    ("reaction_diffusion", "unit_square", {"reaction": "cubic", "bc": "robin"}, 2, (10, 20), 3),
    ("reaction_diffusion", "circle", {"time": "transient", "reaction": "logistic"}, 1, (10, 20), 2),
    ("stokes", "unit_square", {"bc": "mixed"}, 2, (8, 16), 3),
    ("stokes", "annulus", {}, 2, (16, 32), 3),
    ("navier_stokes", "unit_square", {"reynolds": "medium"}, 2, (8, 16), 3),
    ("navier_stokes", "circle", {}, 2, (10, 20), 3),
    ("burgers", "unit_square", {"bc": "mixed"}, 1, (10, 20), 2),
    ("burgers", "circle", {}, 1, (10, 20), 2),
    ("wave", "unit_square", {"bc": "mixed"}, 1, (10, 20), 2),
    ("wave", "annulus", {}, 1, (10, 20), 2),
]


@pytest.mark.parametrize(("family", "domain", "levels", "degree", "cells", "order"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_observed_order(family, domain, levels, degree, cells, order, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)

    def solve(d, settings, n):  # type: ignore[no-untyped-def]
        from casekit.solvers.dolfinx import solve

        solve(d.case_spec(), settings)
        return tmp_path / "solution.npz"

    assert_observed_order(family, domain, levels, degree, cells, order, solve, stabilization=True)
