"""Linear elasticity: -div sigma(u) = f with traction data sigma n = g on Neumann parts."""

from __future__ import annotations

from typing import Any

import firedrake as fd
import ufl

from casekit.tracks.firedrake.solvers import family
from casekit.tracks.firedrake.solvers.problem import Problem


@family("linear_elasticity")
def elasticity(p: Problem) -> tuple[Any, dict[str, Any]]:
    E, nu = float(p.spec["pde"]["params"]["E"]), float(p.spec["pde"]["params"]["nu"])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    V = fd.VectorFunctionSpace(p.mesh, "CG", p.settings.degree)
    u, v = fd.Function(V), fd.TestFunction(V)
    eps = ufl.sym(ufl.grad(u))
    sigma = lam * ufl.tr(eps) * ufl.Identity(p.dim) + 2 * mu * eps
    F = (ufl.inner(sigma, ufl.sym(ufl.grad(v))) - ufl.inner(p.forcing(), v)) * ufl.dx + p.natural(u, v)
    p.newton(F, u, p.dirichlets(V))
    return u, {"dofs": V.dim()}
