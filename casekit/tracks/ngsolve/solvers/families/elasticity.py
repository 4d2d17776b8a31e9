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

    robin, data = p.natural_parts(u, v)

    def residual(f: Any, with_data: bool) -> Any:
        a = ng.BilinearForm(fes)
        a += (2 * mu * ng.InnerProduct(eps(u), eps(v)) + lam * ng.div(u) * ng.div(v) - ng.InnerProduct(f, v)) * ng.dx
        for term in (robin, data if with_data else None):
            if term is not None:
                a += term
        return a

    gfu = ng.GridFunction(fes)
    p.set_dirichlet(gfu)
    # the Jacobian's form: the same integrals with the data zero (see Problem.newton)
    steps = p.newton(residual(p.forcing(), True), gfu, linear=True, spd=p.robin_nonnegative(),
                     jacobian=residual(p.zero(p.dim), False))
    return gfu, {"dofs": fes.ndof, "newton_iterations": steps}
