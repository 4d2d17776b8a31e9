"""The DOLFINx Newton keeps its factorised Jacobian across iterations and time steps (a step of the
kept factorisation is taken when it contracts the residual enough, else the Jacobian is refactorised,
numerically only).  Both ways meet the same stopping test, so a transient nonlinear solve gives the
field of a Newton that refactorises at every iteration, to the Newton tolerance, with far fewer
factorisations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.dolfinx


def _solve(domain: str, *, reuse: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, dict[str, Any], int]:
    """The logistic reaction-diffusion calibration on a coarse mesh: (u(t_end), solver info, how
    many symbolic LU factorisations PETSc made)."""
    import dolfinx_solver  # noqa: F401
    from petsc4py import PETSc

    from casekit.derive import derive
    from casekit.model.source import CaseSource
    from casekit.tracks.dolfinx.solvers.families.reaction_diffusion import reaction_diffusion
    from casekit.tracks.dolfinx.solvers.problem import Problem
    from tests.helpers import build_source

    src = build_source("reaction_diffusion", domain, {"time": "transient", "reaction": "logistic"}, seed=1)
    spec = derive(CaseSource.from_dict(src)).case_spec()
    t = src["pde"]["time"]
    # "standard" (the calibration's): Newton proper, refactorised at each iteration; "modified" (the
    # reference levels'): the factorisation is kept while it contracts the residual
    p = Problem(spec, {"cells_across": 8, "degree": 1, "scheme": "bdf2", "dt": (t["t_end"] - t["t0"]) / 12,
                       "newton": "modified" if reuse else "standard"})
    PETSc.Log.begin()
    symbolic = PETSc.Log.Event("MatLUFactorSym")
    before = symbolic.getPerfInfo()["count"]
    result = reaction_diffusion(p)
    return result.u.x.array.copy(), result.info, symbolic.getPerfInfo()["count"] - before


@pytest.mark.parametrize("domain", ["unit_square", "periodic_square"])  # periodic: the reduced system
def test_a_kept_factorisation_gives_the_fresh_newton_field_with_fewer_factorisations(
        domain: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh, fresh_info, _ = _solve(domain, reuse=False, monkeypatch=monkeypatch)
    kept, info, symbolic = _solve(domain, reuse=True, monkeypatch=monkeypatch)
    assert np.abs(kept - fresh).max() <= 1e-8 * np.abs(fresh).max(), np.abs(kept - fresh).max()
    assert fresh_info["factorizations"] == fresh_info["newton_iterations"], fresh_info  # one per iteration
    assert info["time_steps"] == 12 and info["factorizations"] * 3 <= fresh_info["factorizations"], (info, fresh_info)
    # one symbolic analysis per Newton (Crank-Nicolson starts BDF2): refactorisations are numeric only
    assert symbolic == 2, symbolic
