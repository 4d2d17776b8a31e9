"""The biharmonic equation with u and Laplace(u) given on the boundary, split exactly into two
Poisson solves: Laplace(w) = f with w = Laplace(u) data, then Laplace(u) = w with u data."""

from __future__ import annotations

from typing import Any

import ngsolve as ng

from casekit.solvers.forms import Biharmonic
from casekit.tracks.ngsolve.solvers import for_forms
from casekit.tracks.ngsolve.solvers.problem import Problem


@for_forms(Biharmonic)
def biharmonic(p: Problem) -> tuple[Any, dict[str, Any]]:
    fes = p.space(p.settings.degree)
    u, v = fes.TnT()
    gfw, gfu = ng.GridFunction(fes), ng.GridFunction(fes)

    def poisson(source: Any) -> Any:  # -Laplace(.) = -source
        a = ng.BilinearForm(fes)
        a += (ng.grad(u) * ng.grad(v) + source * v) * ng.dx
        return a

    # each Jacobian's form has the source zero (see Problem.newton); both Laplacians with Dirichlet
    # data: SPD
    p.set_dirichlet(gfw, key="laplacian")
    p.newton(poisson(p.forcing()), gfw, linear=True, spd=True, jacobian=poisson(p.zero()))
    p.set_dirichlet(gfu)
    p.newton(poisson(gfw), gfu, linear=True, spd=True, jacobian=poisson(p.zero()))
    return gfu, {"dofs": 2 * fes.ndof, "linear_solves": 2}
