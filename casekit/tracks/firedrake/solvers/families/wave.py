"""Wave: u_tt - c^2 Laplace(u) = f by Newmark's average acceleration (as the DOLFINx solver):
M (u1 - u0 - dt v0) + dt^2/4 (S(u1, t1) + S(u0, t0)) = 0, then v1 = 2 (u1 - u0)/dt - v0."""

from __future__ import annotations

from typing import Any

import firedrake as fd
import ufl

from casekit.solvers.forms import FORMS, Wave, form_of
from casekit.tracks.firedrake.solvers import family
from casekit.tracks.firedrake.solvers.problem import Problem


@family(*(name for name, f in FORMS.items() if isinstance(f, Wave)))
def wave(p: Problem) -> tuple[Any, dict[str, Any]]:
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Wave)
    c2 = float(p.spec["pde"]["params"][form.speed]) ** 2
    V = fd.FunctionSpace(p.mesh, "CG", p.settings.degree)
    v = fd.TestFunction(V)
    n, dt = p.time_steps()
    k2 = dt * dt / 4
    t_old = fd.Constant(p.t0)
    p.t.assign(p.t0)
    u0 = fd.Function(V).interpolate(p.ufl(p.spec["ic"]["u"], t=fd.Constant(p.t0)))
    v0 = fd.Function(V).interpolate(p.ufl(p.spec["ic"]["v"], t=fd.Constant(p.t0)))
    u1 = fd.Function(V).assign(u0)

    def S(u: Any, t: Any) -> Any:
        return (c2 * ufl.inner(ufl.grad(u), ufl.grad(v)) - p.forcing(t) * v) * ufl.dx + p.natural(u, v, t)

    F = (u1 - u0 - dt * v0) * v * ufl.dx + k2 * (S(u1, p.t) + S(u0, t_old))
    solver = fd.NonlinearVariationalSolver(fd.NonlinearVariationalProblem(F, u1, p.dirichlets(V)),
                                           solver_parameters=p.params)
    for step in range(1, n + 1):
        t_old.assign(p.t0 + (step - 1) * dt)
        p.t.assign(p.t0 + step * dt)
        solver.solve()
        v0.assign(2.0 * (u1 - u0) / dt - v0)
        u0.assign(u1)
    return u0, {"dofs": V.dim(), "time_steps": n}
