"""Stokes on Taylor-Hood elements: -nu Laplace(u) + grad p = f, div u = 0.

Traction data are nu (grad u) n - p n, the natural condition of this weak form.  With velocity
given on the whole (non-periodic) boundary the pressure is fixed by pinning one pressure dof; the
evaluated output is the velocity, which does not depend on that constant.

The system is a saddle point: it is solved by LU, or (large, 3-D) by MINRES preconditioned by the
block diagonal of the viscous operator and the pressure mass matrix over nu (``saddle_point``),
never by GMRES + ILU(0), which converged on a wrong field for 3-D Stokes (see ``linalg``).
"""

from __future__ import annotations

from typing import Any

import basix.ufl
import numpy as np
import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import SaddlePoint, Stats, collapse, solve_linear
from casekit.tracks.dolfinx.solvers.problem import Problem, add


def taylor_hood(p: Problem) -> tuple[fem.FunctionSpace, np.ndarray | None]:
    """The mixed space and, when the pressure is only defined up to a constant, a dof to pin."""
    cell = p.mesh.basix_cell()
    P2 = basix.ufl.element("Lagrange", cell, p.settings.degree, shape=(p.dim,))
    P1 = basix.ufl.element("Lagrange", cell, p.settings.degree - 1)
    W = fem.functionspace(p.mesh, basix.ufl.mixed_element([P2, P1]))
    pin = None
    if not p.entries("neumann"):
        pin = collapse(W.sub(1))[1][:1].astype(np.int32)
    return W, pin


def saddle_point(p: Problem, W: fem.FunctionSpace, nu: Any) -> SaddlePoint:
    """The velocity and pressure dofs of the Taylor-Hood space ``W`` and the block-diagonal form
    that preconditions its Stokes system at viscosity ``nu`` (a number or a UFL constant):
    nu (grad u, grad v) on the velocity, (p, q) / nu on the pressure."""
    (u, q_p), (v, q) = ufl.TrialFunctions(W), ufl.TestFunctions(W)
    form = (nu * ufl.inner(ufl.grad(u), ufl.grad(v)) + (1.0 / nu) * q_p * q) * p.dx
    return SaddlePoint((("u", W.sub(0)), ("p", W.sub(1))), form)


@family("stokes")
def stokes(p: Problem) -> Result:
    nu = p.number("nu")
    W, pin = taylor_hood(p)
    (u, q_p), (v, q) = ufl.TrialFunctions(W), ufl.TestFunctions(W)
    a = (nu * ufl.inner(ufl.grad(u), ufl.grad(v)) - q_p * ufl.div(v) - q * ufl.div(u)) * p.dx
    L = add(ufl.inner(p.forcing(), v) * p.dx, p.neumann_terms(v))
    stats = Stats()
    w = solve_linear(p, a, L, W, p.dirichlets(W.sub(0)), stats, pin=pin, saddle=saddle_point(p, W, nu))
    return Result(w.sub(0).collapse(), stats.info())
