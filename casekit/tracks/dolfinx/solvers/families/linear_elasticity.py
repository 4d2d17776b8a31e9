"""Linear elasticity (plane strain in 2-D): -div(sigma(u)) = f, displacement and traction BCs."""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import Stats, solve_linear
from casekit.tracks.dolfinx.solvers.problem import Problem, add


@family("linear_elasticity")
def linear_elasticity(p: Problem) -> Result:
    E, nu = p.number("E"), p.number("nu")
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree, (p.dim,)))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)

    def sigma(w):  # type: ignore[no-untyped-def]
        eps = ufl.sym(ufl.grad(w))
        return lam * ufl.tr(eps) * ufl.Identity(p.dim) + 2 * mu * eps

    a = ufl.inner(sigma(u), ufl.grad(v)) * p.dx
    L = add(ufl.inner(p.forcing(), v) * p.dx, p.neumann_terms(v))
    stats = Stats()
    return Result(solve_linear(p, a, L, V, p.dirichlets(V), stats, spd=True), stats.info())
