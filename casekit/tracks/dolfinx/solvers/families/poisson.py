"""Poisson: -div(kappa grad u) = f with Dirichlet, Neumann, Robin and periodic conditions."""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import Stats, solve_linear
from casekit.tracks.dolfinx.solvers.problem import Problem, add


def scalar_elliptic(p: Problem, diffusion: object, reaction: object = None, *,
                    convection: object = None) -> Result:
    """-div(diffusion grad u) + convection . grad u + reaction u = f with the case's BCs."""
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    a = diffusion * ufl.inner(ufl.grad(u), ufl.grad(v)) * p.dx
    if convection is not None:
        a += ufl.inner(convection, ufl.grad(u)) * v * p.dx
    if reaction is not None:
        a += reaction * u * v * p.dx
    L = p.forcing() * v * p.dx
    ra, rL = p.robin_terms(u, v)
    stats = Stats()
    spd = convection is None and reaction is None and p.robin_nonnegative()
    uh = solve_linear(p, add(a, ra), add(L, p.neumann_terms(v), rL), V, p.dirichlets(V), stats, spd=spd)
    return Result(uh, stats.info())


@family("poisson")
def poisson(p: Problem) -> Result:
    return scalar_elliptic(p, p.param("kappa"))
