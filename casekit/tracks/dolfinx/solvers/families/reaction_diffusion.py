"""Reaction-diffusion: [u_t] - eps Laplace(u) + R(u) = f (Newton for nonlinear R)."""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import Newton, Stats
from casekit.tracks.dolfinx.solvers.problem import Problem, add
from casekit.tracks.dolfinx.solvers.timestep import initial, integrate


@family("reaction_diffusion")
def reaction_diffusion(p: Problem) -> Result:
    eps = p.number("epsilon")
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree))

    def residual(u, v, t):  # type: ignore[no-untyped-def]
        ra, rL = p.boundary_load(u, v, t)
        form = (eps * ufl.inner(ufl.grad(u), ufl.grad(v)) + p.param("reaction", {"u": u}, t=t) * v
                - p.forcing(t=t) * v) * p.dx
        return add(form, ra, -rL if rL is not None else None)

    stats = Stats()
    if p.transient:
        u = integrate(p, V, residual, stats, linear=False)
    else:
        u = fem.Function(V)
        Newton(p, residual(u, ufl.TestFunction(V), p.t), u, p.dirichlets(V), stats).solve()
    return Result(u, stats.info())


__all__ = ["initial", "reaction_diffusion"]
