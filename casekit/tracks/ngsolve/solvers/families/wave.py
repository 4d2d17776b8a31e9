"""The wave equation as a first-order system in (u, w = u_t), Crank-Nicolson in time (the
average-acceleration Newmark scheme of the other tracks); Dirichlet data on u and on w (their
time derivative), Neumann data c^2 du/dn."""

from __future__ import annotations

from typing import Any

import ngsolve as ng

from casekit.solvers.forms import Wave, form_of
from casekit.tracks.ngsolve.solvers import for_forms
from casekit.tracks.ngsolve.solvers.problem import Problem


@for_forms(Wave)
def wave(p: Problem) -> tuple[Any, dict[str, Any]]:
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Wave)
    c2 = float(p.spec["pde"]["params"][form.speed]) ** 2
    fes = p.space(p.settings.degree)
    X = fes * fes
    (u, w), (v, z) = X.TnT()
    n, dt = p.time_steps()
    t_old = ng.Parameter(p.t0)
    gfx, old = ng.GridFunction(X), ng.GridFunction(X)
    u_n, w_n = old.components
    u_n.Set(p.cf(p.spec["ic"]["u"], t=t_old))
    w_n.Set(p.cf(p.spec["ic"].get("v", 0.0), t=t_old))
    # the residual is A x + d: A (on the new state) is assembled and factorised once; d, the old
    # state's terms and the mean of forcing and Neumann data at both ends of the step, per step
    # (the data at the new time only: the old end's is the step before's)
    operator = ((u / dt - 0.5 * w) * z + w / dt * v + 0.5 * c2 * ng.grad(u) * ng.grad(v)) * ng.dx
    known = ((-u_n / dt - 0.5 * w_n) * z - w_n / dt * v + 0.5 * c2 * ng.grad(u_n) * ng.grad(v)) * ng.dx
    data = -p.forcing() * v * ng.dx
    for e in p.entries("neumann"):
        data += -p.cf(e["value"]) * v * p.ds(e["tag"])
    a, state = ng.BilinearForm(operator), ng.LinearForm(known)
    source = p.step_data(ng.LinearForm(data))  # at t0
    d = gfx.vec.CreateVector()
    for step in range(1, n + 1):
        t_old.Set(p.t0 + (step - 1) * dt)
        p.t.Set(p.t0 + step * dt)
        gfx.vec.data = old.vec
        p.set_dirichlet(gfx.components[0])
        p.set_dirichlet(gfx.components[1], rate=True)
        state.Assemble()
        source.advance()
        d.data = state.vec + 0.5 * source.now
        d.data += 0.5 * source.before
        p.linear_step(a, gfx, d, spd=False)  # constant c: one factorisation for all steps (nonsymmetric)
        old.vec.data = gfx.vec
    return gfx.components[0], {"dofs": X.ndof, "time_steps": n}
