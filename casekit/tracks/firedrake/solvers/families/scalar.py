"""Scalar second-order families in one weak form (as the deal.II program):
m u_t - div(kappa grad u) + beta . grad u + c u + R(u) [+ u (b . grad u)] = f, with optional
SUPG, natural Neumann/Robin data, and backward Euler, Crank-Nicolson or BDF2 in time."""

from __future__ import annotations

from typing import Any

import firedrake as fd
import ufl

from casekit.solvers.forms import FORMS, Scalar, form_of
from casekit.tracks.firedrake.solvers import family
from casekit.tracks.firedrake.solvers.problem import Problem


def _coefficients(p: Problem) -> dict[str, Any]:
    """The coefficients of the scalar form, read from the family's form description."""
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Scalar)
    params = p.spec["pde"].get("params", {})
    co: dict[str, Any] = {"kappa": p.param(form.diffusion) if form.diffusion in params else 1.0}
    if form.wavenumber:
        co["c"] = -p.param(form.wavenumber) ** 2
    if form.convection:
        co["beta"] = p.param(form.convection)
    if form.reaction:
        co["reaction"] = form.reaction
    if form.burgers:
        co["burgers"] = p.param(form.burgers)
    return co


@family(*(name for name, f in FORMS.items() if isinstance(f, Scalar)))
def scalar(p: Problem) -> tuple[Any, dict[str, Any]]:
    co = _coefficients(p)
    V = fd.FunctionSpace(p.mesh, "CG", p.settings.degree)
    v = fd.TestFunction(V)
    supg = p.settings.stabilization == "supg" and "beta" in co

    def S(u: Any, t: Any) -> Any:
        kappa = co.get("kappa", 1.0)
        form = (kappa * ufl.inner(ufl.grad(u), ufl.grad(v)) + co.get("c", 0.0) * u * v - p.forcing(t) * v) * ufl.dx
        if "beta" in co:
            form += ufl.inner(co["beta"], ufl.grad(u)) * v * ufl.dx
        if co.get("reaction"):
            form += p.param(co["reaction"], {"u": u}, t) * v * ufl.dx
        if "burgers" in co:
            form += u * ufl.inner(ufl.grad(u), co["burgers"]) * v * ufl.dx
        if supg:
            b = co["beta"]
            bn = ufl.sqrt(ufl.inner(b, b))
            pe = bn * p.h / (2 * kappa)
            tau = p.h / (2 * bn) * (1 / ufl.tanh(pe) - 1 / pe)
            strong = -kappa * ufl.div(ufl.grad(u)) + ufl.inner(b, ufl.grad(u)) - p.forcing(t)
            form += tau * ufl.inner(b, ufl.grad(v)) * strong * ufl.dx
        return form + p.natural(u, v, t)

    u = fd.Function(V)
    info: dict[str, Any] = {"dofs": V.dim(), "newton_iterations": 0}
    if not p.transient:
        info["newton_iterations"] = p.newton(S(u, p.t), u, p.dirichlets(V))
        return u, info
    n, dt = p.time_steps()
    u_n = fd.Function(V).interpolate(p.ufl(p.spec["ic"]["u"], t=fd.Constant(p.t0)))
    u_nm1 = fd.Function(V).assign(u_n)
    t_old = fd.Constant(p.t0)
    k = fd.Constant(dt)
    bcs = p.dirichlets(V)
    forms = {
        "backward_euler": (u - u_n) / k * v * ufl.dx + S(u, p.t),
        "crank_nicolson": (u - u_n) / k * v * ufl.dx + 0.5 * S(u, p.t) + 0.5 * S(u_n, t_old),
        "bdf2": (1.5 * u - 2.0 * u_n + 0.5 * u_nm1) / k * v * ufl.dx + S(u, p.t),
    }
    solvers = {}
    for step in range(1, n + 1):
        t_old.assign(p.t0 + (step - 1) * dt)
        p.t.assign(p.t0 + step * dt)
        kind = "crank_nicolson" if p.settings.scheme == "bdf2" and step == 1 else p.settings.scheme
        if kind not in solvers:
            problem = fd.NonlinearVariationalProblem(forms[kind], u, bcs)
            solvers[kind] = fd.NonlinearVariationalSolver(problem, solver_parameters=p.params)
        u.assign(u_n)
        solvers[kind].solve()
        info["newton_iterations"] += solvers[kind].snes.getIterationNumber()
        u_nm1.assign(u_n)
        u_n.assign(u)
    info["time_steps"] = n
    return u_n, info
