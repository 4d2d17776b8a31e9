"""The numpy track's incompressible flow on its staggered (MAC) grid, in the track's environment:
manufactured Stokes flows converge at second order in the velocity with velocity data on the
whole boundary and with a traction part, Navier-Stokes at Reynolds number ~10 does too, a 3-D
Stokes flow solves on a coarse grid, and a solve that cannot converge fails with its reason and
writes no field (the shared matrix holds the unit- and periodic-square rows as well)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from casekit.derive import derive
from casekit.errors import CasekitError
from casekit.model.source import CaseSource
from casekit.tracks import TRACKS
from tests.helpers import build_source
from tests.tracks.measure import assert_observed_order, measured_error

pytestmark = pytest.mark.numpy


def _solve(tmp_path: Path) -> Any:
    track = TRACKS.get("numpy")
    return lambda d, settings, n: track.solve_directly(d.case_spec(), settings, tmp_path / str(n))


@pytest.mark.parametrize(("family", "levels"), [
    ("stokes", {"bc": "dirichlet"}),  # the pressure pinned, its mean restored
    ("stokes", {"bc": "mixed"}),  # traction on two sides: the half-cell balance of the normal velocity
    ("navier_stokes", {"reynolds": "medium", "bc": "dirichlet"}),  # nu = 0.1, |u| up to ~10: Newton
])
def test_flow_on_the_unit_square_converges_at_second_order(family: str, levels: dict[str, str],
                                                           tmp_path: Path) -> None:
    """Order 2 within 0.3 at 8 and 16 cells (measured 1.84-1.96 there, 1.93-1.98 finer)."""
    assert_observed_order(family, "unit_square", levels, 1, (8, 16), 2, _solve(tmp_path))


def test_stokes_on_the_unit_cube_solves_coarsely(tmp_path: Path) -> None:
    """Traction on three faces, 8 cells across: the relative error is that of a second-order
    scheme there (0.071 measured; 0.019 at 16 cells)."""
    src = build_source("stokes", "unit_cube", {"bc": "mixed"}, seed=1)
    src["eval_grid"] = {"nx": 9, "ny": 9, "nz": 9}
    d = derive(CaseSource.from_dict(src))
    settings = {**src["calibration"], "degree": 1, "cells_across": 8}
    error = measured_error(d, _solve(tmp_path)(d, settings, 8))
    assert error < 0.15, error


def test_a_solve_that_cannot_converge_fails_with_its_reason(tmp_path: Path) -> None:
    """Navier-Stokes allowed two Newton steps per level cannot converge: the run fails naming the
    viscosity it stopped at, and writes no solution."""
    src = build_source("navier_stokes", "unit_square", {"reynolds": "medium", "bc": "dirichlet"}, seed=1)
    d = derive(CaseSource.from_dict(src))
    settings = {**src["calibration"], "degree": 1, "cells_across": 8, "max_newton_iterations": 2}
    with pytest.raises(CasekitError, match=r"Newton did not converge in 2 iterations at viscosity"):
        _solve(tmp_path)(d, settings, 8)
    assert not (tmp_path / "8" / "solution.npz").exists()


def test_a_flow_periodic_in_every_direction_is_refused(tmp_path: Path) -> None:
    """No velocity datum anywhere: the velocity's mean is free, so the solver says so."""
    src = build_source("stokes", "periodic_square", {"bc": "dirichlet"}, seed=1)
    spec = derive(CaseSource.from_dict(src)).case_spec()
    spec["bc"] = {"periodic": [{"tags": ["left", "right"], "translation": [1.0, 0.0]},
                               {"tags": ["bottom", "top"], "translation": [0.0, 1.0]}]}
    settings = {**src["calibration"], "degree": 1, "cells_across": 8}
    with pytest.raises(CasekitError, match="periodic in every direction"):
        TRACKS.get("numpy").solve_directly(spec, settings, tmp_path)


def test_the_block_preconditioned_krylov_step_is_the_factorized_one() -> None:
    """A 3-D Navier-Stokes Jacobian (traction on three faces) solved by GMRES with the
    block-triangular preconditioner gives the LU update to 1e-8, in few iterations."""
    import numpy as np

    from casekit.tracks.numpy.solvers.box import Box
    from casekit.tracks.numpy.solvers.families import flow
    from casekit.tracks.numpy.solvers.linalg import Stats

    src = build_source("navier_stokes", "unit_cube", {"bc": "mixed"}, seed=1)
    spec = derive(CaseSource.from_dict(src)).case_spec()
    box = Box(spec, {**src["calibration"], "degree": 1, "cells_across": 6})
    system = flow.System(box, float(spec["pde"]["params"]["nu"]), True)
    x = system.start()
    free = ~system.grid.known
    jac = system.jacobian(x)[free][:, free].tocsc()
    r = system.residual(x)[free]
    stats = Stats()
    krylov = flow.BlockSolver(system, stats).solve(jac, r, box.settings, stats)
    exact = flow.direct(jac, r, Stats())
    assert np.linalg.norm(krylov - exact) <= 1e-8 * np.linalg.norm(exact)
    assert 0 < stats.krylov_iterations < 200 and "krylov_fallbacks" not in stats.extra
