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
    a = ng.BilinearForm(fes)
    a += (ng.grad(u) * ng.grad(v) + p.forcing() * v) * ng.dx  # -Laplace(w) = -f
    p.set_dirichlet(gfw, key="laplacian")
    p.newton(a, gfw, linear=True, spd=True)  # a Laplacian with Dirichlet data: SPD
    b = ng.BilinearForm(fes)
    b += (ng.grad(u) * ng.grad(v) + gfw * v) * ng.dx  # -Laplace(u) = -w
    p.set_dirichlet(gfu)
    p.newton(b, gfu, linear=True, spd=True)
    return gfu, {"dofs": 2 * fes.ndof, "linear_solves": 2}
