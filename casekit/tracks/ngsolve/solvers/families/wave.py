"""The wave equation as a first-order system in (u, w = u_t), Crank-Nicolson in time (the
average-acceleration Newmark scheme of the other tracks); Dirichlet data on u and on w (their
time derivative), Neumann data c^2 du/dn."""

from __future__ import annotations

from typing import Any

import ngsolve as ng
import sympy as sp

from casekit.expr import T, as_expr, exact, to_text
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
    residual = (((u - u_n) / dt - 0.5 * (w + w_n)) * z + (w - w_n) / dt * v
                + 0.5 * c2 * (ng.grad(u) + ng.grad(u_n)) * ng.grad(v)
                - 0.5 * (p.forcing() + p.forcing(t_old)) * v) * ng.dx
    for e in p.entries("neumann"):
        residual += -0.5 * (p.cf(e["value"]) + p.cf(e["value"], t=t_old)) * v * p.ds(e["tag"])
    a = ng.BilinearForm(X)
    a += residual.Compile()
    rates = {e["tag"]: to_text(sp.diff(exact(as_expr(e["value"], variables=p.variables)), T))
             for e in p.entries("dirichlet")}
    for step in range(1, n + 1):
        t_old.Set(p.t0 + (step - 1) * dt)
        p.t.Set(p.t0 + step * dt)
        gfx.vec.data = old.vec
        p.set_dirichlet(gfx.components[0])
        p.set_dirichlet(gfx.components[1], values=rates)
        p.linear_step(a, gfx)  # constant c: one factorisation for all steps
        old.vec.data = gfx.vec
    return gfx.components[0], {"dofs": X.ndof, "time_steps": n}
