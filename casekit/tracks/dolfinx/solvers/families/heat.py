"""Heat: u_t - div(kappa grad u) = f."""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import Stats
from casekit.tracks.dolfinx.solvers.problem import Problem, add
from casekit.tracks.dolfinx.solvers.timestep import depends_on_time, integrate


@family("heat")
def heat(p: Problem) -> Result:
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree))

    def residual(u, v, t):  # type: ignore[no-untyped-def]
        ra, rL = p.boundary_load(u, v, t)
        form = p.param("kappa", t=t) * ufl.inner(ufl.grad(u), ufl.grad(v)) * p.dx - p.forcing(t=t) * v * p.dx
        return add(form, ra, -rL if rL is not None else None)

    stats = Stats()
    u = integrate(p, V, residual, stats, linear=True, time_dependent_operator=depends_on_time(p, "kappa"),
                  spd=p.robin_nonnegative())
    return Result(u, stats.info())
