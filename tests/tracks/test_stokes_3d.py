"""3-D Stokes calibration (issue 29 item 4): the PDEAgent-Bench record ``stokes_3d_basic``
calibrated on DOLFINx with e_base 0.998.  GMRES + ILU(0) -- the method of every 3-D system solved
once that is not symmetric positive definite -- stopped with CONVERGED_RTOL on the *preconditioned*
residual of the Taylor-Hood saddle point (ILU(0) of its zero pressure block is nearly singular)
while the true relative residual was 1.0, and the field was returned.  Saddle points now go to LU
or to MINRES with a block-diagonal preconditioner, and every linear solve is checked (converged
reason and true residual): one that did not solve is an error naming the system and the reason.
On NGSolve, netgen put each corner of the cube in one tetrahedron whose P2 nodes all lie on the
boundary: 8 spurious pressure modes, and UMFPACK could not factorise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from casekit.derive import derive
from casekit.model.source import CaseSource
from casekit.tracks import TRACKS

from .measure import measured_error

U = ["2*sin(pi*x)*cos(pi*y)*cos(pi*z)", "-cos(pi*x)*sin(pi*y)*cos(pi*z)", "-cos(pi*x)*cos(pi*y)*sin(pi*z)"]

#: the record as converted (velocity given on every face, forcing and data derived)
SOURCE: dict[str, Any] = {
    "id": "stokes_3d_basic",
    "family": "stokes",
    "domain": {"template": "unit_cube"},
    "pde": {"params": {"nu": 1.0}},
    "manufactured_solution": {"u": U, "p": "sin(pi*x)*sin(pi*y)*sin(pi*z)"},
    "boundary": {tag: "dirichlet" for tag in ("left", "right", "front", "back", "bottom", "top")},
    "eval_grid": {"nx": 16, "ny": 16, "nz": 16},
    "output": {"field": "velocity_magnitude"},
    "calibration": {"cells_across": 14, "degree": 2, "rtol": 1e-10},
    "tracks": ["dolfinx", "ngsolve"],
}


def _solve(track: str, cells: int, tmp: Path, **settings: Any) -> tuple[float, dict[str, Any]]:
    """The calibration solver's error against the manufactured solution and its solver info."""
    d = derive(CaseSource.from_dict(SOURCE))
    work = tmp / f"{track}-{cells}"
    solution = TRACKS.get(track).solve_directly(d.case_spec(), {**SOURCE["calibration"], "cells_across": cells,
                                                                **settings}, work)
    return measured_error(d, solution), json.loads((work / "meta.json").read_text())["solver_info"]


@pytest.mark.dolfinx
def test_dolfinx_3d_stokes_calibration_is_right_at_the_record_resolution(tmp_path: Path) -> None:
    coarse, _ = _solve("dolfinx", 8, tmp_path)
    fine, info = _solve("dolfinx", 14, tmp_path)  # 21,577 unknowns: where GMRES + ILU(0) gave e 0.999
    assert fine < 2e-3, (fine, info)
    assert fine < coarse / 3, (coarse, fine)  # converging under refinement
    assert "fallback" not in info, info


@pytest.mark.dolfinx
def test_dolfinx_3d_stokes_solved_iteratively_by_minres_with_its_block_preconditioner(tmp_path: Path) -> None:
    direct, _ = _solve("dolfinx", 8, tmp_path)
    iterative, info = _solve("dolfinx", 8, tmp_path / "it", linear_solver="iterative")
    assert (info["ksp_type"], info["pc_type"]) == ("minres", "fieldsplit"), info
    assert "fallback" not in info, info
    assert abs(iterative - direct) < 1e-6 * direct + 1e-9, (direct, iterative)


@pytest.mark.dolfinx
def test_a_solve_that_stopped_on_a_wrong_field_is_refused_with_its_reason() -> None:
    import dolfinx_solver  # noqa: F401
    from petsc4py import PETSc

    from casekit.tracks.dolfinx.solvers.linalg import solve_checked

    n = 6
    A = PETSc.Mat().createAIJ((n, n), nnz=3)
    for i in range(n):
        A.setValue(i, i, 4.0)
        if i:
            A.setValue(i, i - 1, -1.0)
            A.setValue(i - 1, i, -1.0)
    A.assemble()
    b = A.createVecLeft()
    b.setArray([float(i) for i in range(1, n + 1)])

    def ksp(kind: str, pc: str, max_it: int = 100) -> PETSc.KSP:
        k = PETSc.KSP().create()
        k.setOperators(A)
        k.setType(kind)
        k.getPC().setType(pc)
        k.setTolerances(rtol=1e-10, max_it=max_it)
        return k

    # "converged" (CONVERGED_ITS) on x = b, which does not solve A x = b: a wrong field
    why = solve_checked(ksp("preonly", "none"), "gmres", b, A.createVecRight(), 1e-10)
    assert "CONVERGED_ITS" in why and "true relative residual" in why, why
    why = solve_checked(ksp("gmres", "none", max_it=1), "gmres", b, A.createVecRight(), 1e-10)
    assert "DIVERGED_" in why and "(-3) after 1 iterations" in why, why  # PETSc 3.25: DIVERGED_MAX_IT
    assert solve_checked(ksp("preonly", "lu"), "lu", b, A.createVecRight(), 1e-10) == ""


@pytest.mark.dolfinx
def test_a_linear_system_no_method_solves_is_an_error_naming_the_system_and_the_reason() -> None:
    import dolfinx_solver  # noqa: F401
    import ufl
    from dolfinx import fem

    from casekit.tracks.dolfinx.solvers.linalg import LinearSolveError, LinearSystem, Stats
    from casekit.tracks.dolfinx.solvers.problem import Problem

    p = Problem(derive(CaseSource.from_dict(SOURCE)).case_spec(), {"cells_across": 4, "degree": 1})
    V = fem.functionspace(p.mesh, ("Lagrange", 1))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    # a Neumann Laplacian (singular) with a load of nonzero mean: no vector solves it
    a_form, L_form = p.forms(ufl.inner(ufl.grad(u), ufl.grad(v)) * p.dx, v * p.dx)
    system = LinearSystem(p, a_form, V, [], Stats(), once=True)
    with pytest.raises(LinearSolveError, match=r"the stokes system \(\d+ unknowns\) failed: GMRES \+ ILU\(0\) "
                                               r"stopped with .*; then LU \(MUMPS\) "):
        system.solve(L_form, fem.Function(V))


@pytest.mark.ngsolve
def test_ngsolve_3d_stokes_with_velocity_on_every_face_solves_on_a_netgen_mesh(tmp_path: Path) -> None:
    error, info = _solve("ngsolve", 8, tmp_path)  # each corner of the cube in one tetrahedron
    assert error < 2e-2, (error, info)
