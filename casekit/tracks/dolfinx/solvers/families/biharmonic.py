"""Biharmonic with u and Laplace(u) given on the boundary: two Poisson solves (mixed form).

w = -Laplace(u) satisfies -Laplace(w) = f with w = -laplacian on the boundary; then
-Laplace(u) = w with u = value.  Exact splitting for simply supported conditions.
"""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import LinearSystem, Stats
from casekit.tracks.dolfinx.solvers.problem import Problem


@family("biharmonic")
def biharmonic(p: Problem) -> Result:
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    a = ufl.inner(ufl.grad(u), ufl.grad(v)) * p.dx
    stats = Stats()
    minus_lap = [p.dirichlet(V, -p.tree(e["laplacian"]), e["tag"]) for e in p.entries("dirichlet")]
    w, uh = fem.Function(V), fem.Function(V)
    a_form, first, second = p.forms(a, p.forcing() * v * p.dx, w * v * p.dx)  # one compilation
    LinearSystem(p, a_form, V, minus_lap, stats, spd=True, once=True).solve(first, w)
    LinearSystem(p, a_form, V, p.dirichlets(V), stats, spd=True, once=True).solve(second, uh)
    return Result(uh, stats.info())
