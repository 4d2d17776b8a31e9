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

    # both solves have the operator of the form with the source zero (see Problem.newton), a
    # Laplacian with Dirichlet data (SPD): factorised once; each source's vector is its form's
    # residual at zero (the same integral, so the same integration rule)
    laplacian = poisson(p.zero())
    for gf, key, source in ((gfw, "laplacian", p.forcing()), (gfu, "value", gfw)):
        data = gf.vec.CreateVector()
        zero = gf.vec.CreateVector()
        zero[:] = 0.0
        poisson(source).Apply(zero, data)
        p.set_dirichlet(gf, key=key)
        p.linear_step(laplacian, gf, data, spd=True)
    return gfu, {"dofs": 2 * fes.ndof, "linear_solves": 2, "factorizations": p.factorizations}
