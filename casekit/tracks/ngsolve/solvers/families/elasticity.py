"""Linear elasticity (plane strain in 2-D) on vector Lagrange elements; tractions on Neumann parts."""

from __future__ import annotations

from typing import Any

import ngsolve as ng

from casekit.solvers.forms import Elasticity, form_of
from casekit.tracks.ngsolve.solvers import for_forms
from casekit.tracks.ngsolve.solvers.problem import Problem


@for_forms(Elasticity)
def elasticity(p: Problem) -> tuple[Any, dict[str, Any]]:
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Elasticity)
    params = p.spec["pde"]["params"]
    E, nu = float(params[form.young]), float(params[form.poisson_ratio])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    fes = p.space(p.settings.degree, vector=True)
    u, v = fes.TnT()

    def eps(w: Any) -> Any:
        return ng.Sym(ng.Grad(w))

    a = ng.BilinearForm(fes)
    residual = (2 * mu * ng.InnerProduct(eps(u), eps(v)) + lam * ng.div(u) * ng.div(v)
                - ng.InnerProduct(p.forcing(), v)) * ng.dx
    natural = p.natural(u, v)
    a += residual + natural if natural is not None else residual
    gfu = ng.GridFunction(fes)
    p.set_dirichlet(gfu)
    return gfu, {"dofs": fes.ndof, "newton_iterations": p.newton(a, gfu, linear=True,
                                                                       spd=p.robin_nonnegative())}
