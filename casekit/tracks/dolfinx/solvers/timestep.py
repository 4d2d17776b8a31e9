"""Time integration of first-order problems  (u_t, v) + R(u; v, t) = 0.

``R`` is the family's spatial residual (diffusion, transport, reaction, minus forcing and
boundary data) evaluated at a time Constant.  Schemes: backward Euler, Crank-Nicolson, and BDF2
(started with one Crank-Nicolson step).  Linear problems factorise their matrix once per scheme
and reuse it for every step; nonlinear ones take Newton steps on compiled forms with one Newton
per scheme, which keeps its factorised Jacobian from step to step while its steps converge fast
(:class:`~casekit.tracks.dolfinx.solvers.linalg.Newton`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers.linalg import LinearSystem, Newton, Stats
from casekit.tracks.dolfinx.solvers.problem import Problem

Residual = Callable[[Any, Any, Any], Any]  # (u, v, t) -> form


def initial(p: Problem, space: Any, name: str = "u") -> fem.Function:
    u = fem.Function(space)
    u.interpolate(p.values(p.spec["ic"][name]))
    return u


def integrate(p: Problem, space: Any, residual: Residual, stats: Stats, *, linear: bool,
              time_dependent_operator: bool = False, spd: bool = False) -> fem.Function:
    """March from the initial data at t0 to t_end; returns u(t_end).  ``spd``: the spatial
    operator is symmetric positive semi-definite (so is every step's matrix, mass included)."""
    n, dt = p.time_steps()
    scheme = p.settings.scheme
    p.t.value = p.t0
    u_n = initial(p, space)
    u_nm1 = fem.Function(space)
    u_nm1.x.array[:] = u_n.x.array
    u_new = fem.Function(space)
    t_old = fem.Constant(p.mesh, p.t0)
    bcs = p.dirichlets(space)
    v = ufl.TestFunction(space)
    k = fem.Constant(p.mesh, dt)

    def form(kind: str, w: Any) -> Any:
        if kind == "backward_euler":
            return (w - u_n) / k * v * p.dx + residual(w, v, p.t)
        if kind == "crank_nicolson":
            return (w - u_n) / k * v * p.dx + 0.5 * residual(w, v, p.t) + 0.5 * residual(u_n, v, t_old)
        if kind == "bdf2":
            return (1.5 * w - 2.0 * u_n + 0.5 * u_nm1) / k * v * p.dx + residual(w, v, p.t)
        raise ValueError(f"unknown time scheme {kind!r}")

    solvers: dict[str, Any] = {}
    for step in range(1, n + 1):
        t_old.value = p.t0 + (step - 1) * dt
        p.t.value = p.t0 + step * dt
        for d in bcs:
            d.update()
        kind = "crank_nicolson" if scheme == "bdf2" and step == 1 else scheme
        if kind not in solvers:  # BDF2's Crank-Nicolson start is not solved again: free its factorisation
            solvers.clear()
        if linear:
            if kind not in solvers or time_dependent_operator:
                a, L = ufl.system(form(kind, ufl.TrialFunction(space)))
                a_form, L_form = p.forms(a, L)
                solvers[kind] = (LinearSystem(p, a_form, space, bcs, stats, spd=spd), L_form)
            system, L = solvers[kind]
            system.solve(L, u_new)
        else:
            if kind not in solvers:
                solvers[kind] = Newton(p, form(kind, u_new), u_new, bcs, stats)
            u_new.x.array[:] = u_n.x.array
            solvers[kind].solve()
        u_nm1.x.array[:] = u_n.x.array
        u_n.x.array[:] = u_new.x.array
    stats.time_steps += n
    return u_n


def depends_on_time(p: Problem, *params: str) -> bool:
    """Whether any of the named parameters varies in time (its matrix then changes per step)."""
    for name in params:
        value = p.tree(p.spec["pde"]["params"][name], ("u",))
        parts = value if isinstance(value, tuple) else (value,)
        if any("t" in c.names() for c in parts):
            return True
    return False
