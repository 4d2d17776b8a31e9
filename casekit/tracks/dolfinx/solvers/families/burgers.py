"""Viscous Burgers (scalar): u_t + u (grad(u) . b) - nu Laplace(u) = f, Newton in every step."""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import Stats
from casekit.tracks.dolfinx.solvers.problem import Problem, add
from casekit.tracks.dolfinx.solvers.timestep import integrate


@family("burgers")
def burgers(p: Problem) -> Result:
    nu, b = p.number("nu"), p.vector("b")
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree))

    def residual(u, v, t):  # type: ignore[no-untyped-def]
        ra, rL = p.boundary_load(u, v, t)
        form = (u * ufl.inner(ufl.grad(u), b) * v + nu * ufl.inner(ufl.grad(u), ufl.grad(v))
                - p.forcing(t=t) * v) * p.dx
        return add(form, ra, -rL if rL is not None else None)

    stats = Stats()
    return Result(integrate(p, V, residual, stats, linear=False), stats.info())
