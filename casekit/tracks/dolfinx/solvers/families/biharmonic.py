"""Biharmonic with u and Laplace(u) given on the boundary: two Poisson solves (mixed form).

w = -Laplace(u) satisfies -Laplace(w) = f with w = -laplacian on the boundary; then
-Laplace(u) = w with u = value.  Exact splitting for simply supported conditions.
"""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import Stats, solve_linear
from casekit.tracks.dolfinx.solvers.problem import Problem


@family("biharmonic")
def biharmonic(p: Problem) -> Result:
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    a = ufl.inner(ufl.grad(u), ufl.grad(v)) * p.dx
    stats = Stats()
    minus_lap = [p.dirichlet(V, -p.sym(e["laplacian"]), e["tag"]) for e in p.entries("dirichlet")]
    w = solve_linear(p, a, p.forcing() * v * p.dx, V, minus_lap, stats, spd=True)
    uh = solve_linear(p, a, w * v * p.dx, V, p.dirichlets(V), stats, spd=True)
    return Result(uh, stats.info())
