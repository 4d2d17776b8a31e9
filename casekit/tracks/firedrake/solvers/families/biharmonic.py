"""Biharmonic with u and Laplace(u) on the boundary: two Poisson solves (-Laplace w = f with
w = -laplacian, then -Laplace u = w with u = value), exact for these conditions."""

from __future__ import annotations

from typing import Any

import firedrake as fd
import ufl

from casekit.solvers.forms import FORMS, Biharmonic
from casekit.tracks.firedrake.solvers import family
from casekit.tracks.firedrake.solvers.problem import Problem


@family(*(name for name, f in FORMS.items() if isinstance(f, Biharmonic)))
def biharmonic(p: Problem) -> tuple[Any, dict[str, Any]]:
    V = fd.FunctionSpace(p.mesh, "CG", p.settings.degree)
    v = fd.TestFunction(V)
    w, u = fd.Function(V), fd.Function(V)
    p.newton((ufl.inner(ufl.grad(w), ufl.grad(v)) - p.forcing() * v) * ufl.dx, w,
             p.dirichlets(V, "laplacian", scale=-1.0))
    p.newton((ufl.inner(ufl.grad(u), ufl.grad(v)) - w * v) * ufl.dx, u, p.dirichlets(V))
    return u, {"dofs": V.dim()}
