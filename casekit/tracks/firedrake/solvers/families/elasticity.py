"""Linear elasticity: -div sigma(u) = f with traction data sigma n = g on Neumann parts."""

from __future__ import annotations

from typing import Any

import firedrake as fd
import ufl

from casekit.solvers.forms import FORMS, Elasticity, form_of
from casekit.tracks.firedrake.solvers import family
from casekit.tracks.firedrake.solvers.problem import Problem


@family(*(name for name, f in FORMS.items() if isinstance(f, Elasticity)))
def elasticity(p: Problem) -> tuple[Any, dict[str, Any]]:
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Elasticity)
    params = p.spec["pde"]["params"]
    E, nu = float(params[form.young]), float(params[form.poisson_ratio])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    V = fd.VectorFunctionSpace(p.mesh, "CG", p.settings.degree)
    u, v = fd.Function(V), fd.TestFunction(V)
    eps = ufl.sym(ufl.grad(u))
    sigma = lam * ufl.tr(eps) * ufl.Identity(p.dim) + 2 * mu * eps
    F = (ufl.inner(sigma, ufl.sym(ufl.grad(v))) - ufl.inner(p.forcing(), v)) * ufl.dx + p.natural(u, v)
    p.newton(F, u, p.dirichlets(V))
    return u, {"dofs": V.dim()}
