"""Scalar second-order families in one weak form (as the other tracks):
m u_t - div(kappa grad u) + beta . grad u + c u + R(u) [+ u (b . grad u)] = f, with optional SUPG,
natural Neumann/Robin data, Newton (one step for linear problems) and backward Euler,
Crank-Nicolson or BDF2 in time."""

from __future__ import annotations

from typing import Any

import ngsolve as ng

from casekit.solvers.forms import Scalar, form_of
from casekit.tracks.ngsolve.solvers import for_forms
from casekit.tracks.ngsolve.solvers.problem import Problem


def _coefficients(p: Problem) -> dict[str, Any]:
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Scalar)
    params = p.spec["pde"].get("params", {})
    co: dict[str, Any] = {"kappa": p.param(form.diffusion) if form.diffusion and form.diffusion in params
                          else ng.CF(1.0)}
    if form.wavenumber:
        co["c"] = -p.param(form.wavenumber) ** 2
    if form.convection:
        co["beta"] = p.param(form.convection)
    if form.reaction:
        co["reaction"] = form.reaction
    if form.burgers:
        co["burgers"] = p.param(form.burgers)
    return co


def _laplacian(u: Any, order: int) -> Any:
    return ng.Trace(u.Operator("hesse")) if order >= 2 else ng.CF(0.0)


@for_forms(Scalar)
def scalar(p: Problem) -> tuple[Any, dict[str, Any]]:
    co = _coefficients(p)
    order = p.settings.degree
    fes = p.space(order)
    u, v = fes.TnT()
    supg = p.settings.stabilization == "supg" and "beta" in co

    def tau(kappa: Any) -> Any:
        b = co["beta"]
        bn = ng.sqrt(ng.InnerProduct(b, b)) + 1e-14
        pe = bn * p.h / (2 * kappa)
        coth = (ng.exp(2 * pe) + 1) / (ng.exp(2 * pe) - 1)
        xi = ng.IfPos(pe - 20, 1 - 1 / pe, coth - 1 / pe)
        return p.h / (2 * bn) * xi

    def kappa_at(t: Any) -> Any:
        return co["kappa"] if t is p.t else _at(p, co["kappa"], t)

    def S_op(w: Any, t: Any) -> Any:
        """The terms of the spatial residual that act on w."""
        kappa = kappa_at(t)
        form = kappa * ng.grad(w) * ng.grad(v) * ng.dx
        if "c" in co:
            form += co["c"] * w * v * ng.dx
        if "beta" in co:
            form += ng.InnerProduct(co["beta"], ng.grad(w)) * v * ng.dx
        if "reaction" in co:
            form += p.param(co["reaction"], {"u": w}, t) * v * ng.dx
        if "burgers" in co:
            form += w * ng.InnerProduct(co["burgers"], ng.grad(w)) * v * ng.dx
        if supg:
            strong = -kappa * _laplacian(w, order) + ng.InnerProduct(co["beta"], ng.grad(w))
            form += tau(kappa) * ng.InnerProduct(co["beta"], ng.grad(v)) * strong * ng.dx
        robin, _ = p.natural_parts(w, v, t)
        return form + robin if robin is not None else form

    def S_src(t: Any) -> Any:
        """The data terms of the spatial residual (forcing, its SUPG part, boundary data)."""
        form = -p.forcing(t) * v * ng.dx
        if supg:
            form += -tau(kappa_at(t)) * ng.InnerProduct(co["beta"], ng.grad(v)) * p.forcing(t) * ng.dx
        _, data = p.natural_parts(u, v, t)
        return form + data if data is not None else form

    gfu = ng.GridFunction(fes)
    linear = "reaction" not in co and "burgers" not in co
    # diffusion (plus mass in time) and Robin terms >= 0 alone: symmetric positive definite;
    # Helmholtz's -k^2 makes it indefinite, convection (and SUPG) nonsymmetric
    spd = linear and not {"c", "beta"} & co.keys() and p.robin_nonnegative()
    info: dict[str, Any] = {"dofs": fes.ndof, "newton_iterations": 0}
    if not p.transient:
        p.set_dirichlet(gfu)
        a, jacobian = ng.BilinearForm(fes), ng.BilinearForm(fes)
        a += S_op(u, p.t) + S_src(p.t)
        jacobian += S_op(u, p.t)  # a's integrals on u without the data ones (see Problem.newton)
        info["newton_iterations"] = p.newton(a, gfu, linear, spd=spd, jacobian=jacobian)
        return gfu, {**info, "factorizations": p.factorizations}
    n, dt = p.time_steps()
    t_old = ng.Parameter(p.t0)
    gfu.Set(p.cf(p.spec["ic"]["u"], t=t_old))
    u_n, u_nm1 = ng.GridFunction(fes), ng.GridFunction(fes)
    u_n.vec.data = gfu.vec
    u_nm1.vec.data = gfu.vec
    # each scheme's residual is N(u) + d: N acts on the new state (the Newton form; for a linear
    # problem with time-independent coefficients its matrix is factorised once), d holds what is
    # known at the step: terms on old states and the data S_src, each assembled once per step
    # (not per Newton iteration), the data at t_old taken from the step before
    schemes = {
        "backward_euler": (u / dt * v * ng.dx + S_op(u, p.t), -u_n / dt * v * ng.dx, 1.0, 0.0),
        "crank_nicolson": (u / dt * v * ng.dx + 0.5 * S_op(u, p.t), -u_n / dt * v * ng.dx + 0.5 * S_op(u_n, t_old),
                           0.5, 0.5),
        "bdf2": (1.5 * u / dt * v * ng.dx + S_op(u, p.t), (-2.0 * u_n + 0.5 * u_nm1) / dt * v * ng.dx, 1.0, 0.0),
    }
    source = p.step_data(ng.LinearForm(S_src(p.t)))  # at t0
    d = gfu.vec.CreateVector()
    fixed_operator = linear and not _time_dependent_operator(p)
    forms: dict[str, tuple[Any, Any]] = {}
    for step in range(1, n + 1):
        t_old.Set(p.t0 + (step - 1) * dt)
        p.t.Set(p.t0 + step * dt)
        kind = "crank_nicolson" if p.settings.scheme == "bdf2" and step == 1 else p.settings.scheme
        operator, known, w_now, w_before = schemes[kind]
        if kind not in forms:  # BDF2's Crank-Nicolson start is not solved again: free its factorisation
            for ended, _ in forms.values():
                p.release(ended)
            forms[kind] = (ng.BilinearForm(operator.Compile()), ng.LinearForm(known))
        a, state = forms[kind]
        state.Assemble()
        source.advance()
        d.data = state.vec + w_now * source.now
        if w_before:
            d.data += w_before * source.before
        gfu.vec.data = u_n.vec
        p.set_dirichlet(gfu)
        if fixed_operator:
            info["newton_iterations"] += p.linear_step(a, gfu, d, spd=spd)
        else:
            info["newton_iterations"] += p.newton(a, gfu, linear, d, spd=spd)
        u_nm1.vec.data = u_n.vec
        u_n.vec.data = gfu.vec
    info["time_steps"] = n
    info["factorizations"] = p.factorizations
    return gfu, info


def _time_dependent_operator(p: Problem) -> bool:
    """Whether a coefficient of the operator (diffusion, convection, wavenumber) varies in time."""
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Scalar)
    params = p.spec["pde"].get("params", {})
    names = (form.diffusion, form.convection, form.wavenumber)
    return p.depends_on_time(*(params[name] for name in names if name and name in params))


def _at(p: Problem, cf: Any, t: Any) -> Any:
    """A time-dependent coefficient is re-made at another time parameter."""
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Scalar)
    if form.diffusion and form.diffusion in p.spec["pde"].get("params", {}):
        return p.param(form.diffusion, t=t)
    return cf
