"""Wave: u_tt - c^2 Laplace(u) = f, Newmark average acceleration (energy conserving, 2nd order).

With M the mass and K the stiffness (c^2 grad u . grad v, plus Robin terms) each step solves
(M + dt^2/4 K) u1 = M u0 + dt M v0 - dt^2/4 K u0 + dt^2/4 (F1 + F0), then v1 = 2 (u1 - u0)/dt - v0.
"""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import LinearSystem, Stats
from casekit.tracks.dolfinx.solvers.problem import Problem, add
from casekit.tracks.dolfinx.solvers.timestep import initial


@family("wave")
def wave(p: Problem) -> Result:
    c2 = p.number("c") ** 2
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    n, dt = p.time_steps()
    k2 = dt * dt / 4
    t_old = fem.Constant(p.mesh, p.t0)
    p.t.value = p.t0
    u0, v0 = initial(p, V, "u"), initial(p, V, "v")
    u1 = fem.Function(V)

    def stiffness(w):  # type: ignore[no-untyped-def]
        ra, _ = p.robin_terms(w, v)
        return add(c2 * ufl.inner(ufl.grad(w), ufl.grad(v)) * p.dx, ra)

    def load(t):  # type: ignore[no-untyped-def]
        _, data = p.boundary_load(u, v, t)
        return add(p.forcing(t=t) * v * p.dx, data)

    a = u * v * p.dx + k2 * stiffness(u)
    a, L = p.forms(a, u0 * v * p.dx + dt * v0 * v * p.dx - k2 * stiffness(u0) + k2 * (load(p.t) + load(t_old)))
    bcs = p.dirichlets(V)
    stats = Stats()
    system = LinearSystem(p, a, V, bcs, stats, spd=p.robin_nonnegative())
    for step in range(1, n + 1):
        t_old.value = p.t0 + (step - 1) * dt
        p.t.value = p.t0 + step * dt
        for d in bcs:
            d.update()
        system.solve(L, u1)
        v0.x.array[:] = 2.0 * (u1.x.array - u0.x.array) / dt - v0.x.array
        u0.x.array[:] = u1.x.array
    stats.time_steps = n
    return Result(u0, stats.info())
