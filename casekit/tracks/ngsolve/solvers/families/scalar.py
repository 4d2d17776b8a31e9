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


def _form(fes: Any, integrals: Any) -> Any:
    """A BilinearForm on ``fes`` holding ``integrals``: built on the space, not from the integrals,
    which NGSolve refuses when they have simplified to no trial function (a reaction ``0.0*u``
    as the nonlinear part: "BilinearForm must have Trial- and TestFunction")."""
    a = ng.BilinearForm(fes)
    a += integrals
    return a


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

    def S_op(w: Any, t: Any, part: str = "all") -> Any:
        """The terms of the spatial residual that act on w (``part``: "linear" ones, "nonlinear"
        ones -- reaction, Burgers -- or "all"), each its own integral."""
        kappa = kappa_at(t)
        terms = []
        if part != "nonlinear":
            terms.append(kappa * ng.grad(w) * ng.grad(v) * ng.dx)
            if "c" in co:
                terms.append(co["c"] * w * v * ng.dx)
            if "beta" in co:
                terms.append(ng.InnerProduct(co["beta"], ng.grad(w)) * v * ng.dx)
        if part != "linear":
            if "reaction" in co:
                terms.append(p.param(co["reaction"], {"u": w}, t) * v * ng.dx)
            if "burgers" in co:
                terms.append(w * ng.InnerProduct(co["burgers"], ng.grad(w)) * v * ng.dx)
        if part != "nonlinear":
            if supg:
                strong = -kappa * _laplacian(w, order) + ng.InnerProduct(co["beta"], ng.grad(w))
                terms.append(tau(kappa) * ng.InnerProduct(co["beta"], ng.grad(v)) * strong * ng.dx)
            robin, _ = p.natural_parts(w, v, t)
            if robin is not None:
                terms.append(robin)
        form = terms[0]
        for term in terms[1:]:
            form += term
        return form

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
    # problem with time-independent coefficients its matrix is factorised once, and a nonlinear
    # one's linear terms are a matrix assembled once, beside a form of its nonlinear terms), d holds
    # what is known at the step: terms on old states and the data S_src, each assembled once per
    # step (not per Newton iteration), the data at t_old taken from the step before
    def operator(kind: str, part: str = "all") -> Any:
        spatial = S_op(u, p.t, part)
        if kind == "crank_nicolson":
            spatial = 0.5 * spatial
        if part == "nonlinear":
            return spatial
        return (1.5 * u if kind == "bdf2" else u) / dt * v * ng.dx + spatial

    #: the weights of the data at the new time and at the old one
    weights = {"backward_euler": (1.0, 0.0), "crank_nicolson": (0.5, 0.5), "bdf2": (1.0, 0.0)}
    old = OldStates(fes, dt, u_n, u_nm1, ng.LinearForm(-u_n / dt * v * ng.dx + 0.5 * S_op(u_n, t_old)))
    source = p.step_data(ng.LinearForm(S_src(p.t)), *(_operator_values(p) if supg else []))  # at t0
    d = gfu.vec.CreateVector()
    fixed_operator = not _time_dependent_operator(p)
    forms: dict[str, tuple[Any, Any]] = {}
    for step in range(1, n + 1):
        t_old.Set(p.t0 + (step - 1) * dt)
        p.t.Set(p.t0 + step * dt)
        kind = "crank_nicolson" if p.settings.scheme == "bdf2" and step == 1 else p.settings.scheme
        w_now, w_before = weights[kind]
        if kind not in forms:  # BDF2's Crank-Nicolson start is not solved again: free its factorisation
            for ended, _ in forms.values():
                p.release(ended)
            split = not linear and fixed_operator
            forms[kind] = (_form(fes, operator(kind, "nonlinear" if split else "all").Compile()),
                           _form(fes, operator(kind, "linear").Compile()) if split else None)
        a, linear_part = forms[kind]
        old.terms(kind, d)
        source.advance()
        d.data += w_now * source.now
        if w_before:
            d.data += w_before * source.before
        gfu.vec.data = u_n.vec
        p.set_dirichlet(gfu)
        if linear and fixed_operator:
            info["newton_iterations"] += p.linear_step(a, gfu, d, spd=spd)
        else:
            info["newton_iterations"] += p.newton(a, gfu, linear, d, spd=spd, linear_part=linear_part)
        u_nm1.vec.data = u_n.vec
        u_n.vec.data = gfu.vec
    info["time_steps"] = n
    info["factorizations"] = p.factorizations
    return gfu, info


class OldStates:
    """A step's terms on the old states, as a vector.  Backward Euler's and BDF2's are mass terms:
    one mass matrix, assembled once, applied to the old states (the integration rule of
    ``u_n v dx``, so the linear form's vector to rounding, for a thousandth of its assembly);
    Crank-Nicolson's hold the operator on the old state, a linear form assembled per step (a
    matrix's rule for its diffusion would differ from the form's)."""

    def __init__(self, fes: Any, dt: float, u_n: Any, u_nm1: Any, crank_nicolson: Any) -> None:
        u, v = fes.TnT()
        self.mass = ng.BilinearForm(u * v * ng.dx).Assemble()
        self.dt, self.u_n, self.u_nm1, self.crank_nicolson = dt, u_n, u_nm1, crank_nicolson
        self.work = u_n.vec.CreateVector()

    def terms(self, kind: str, out: Any) -> None:
        if kind == "crank_nicolson":
            self.crank_nicolson.Assemble()
            out.data = self.crank_nicolson.vec
            return
        if kind == "bdf2":
            self.work.data = (-2.0 / self.dt) * self.u_n.vec + (0.5 / self.dt) * self.u_nm1.vec
        else:
            self.work.data = (-1.0 / self.dt) * self.u_n.vec
        out.data = self.mass.mat * self.work


def _operator_values(p: Problem) -> list[Any]:
    """The case_spec values of the operator's coefficients (diffusion, convection, wavenumber)."""
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Scalar)
    params = p.spec["pde"].get("params", {})
    names = (form.diffusion, form.convection, form.wavenumber)
    return [params[name] for name in names if name and name in params]


def _time_dependent_operator(p: Problem) -> bool:
    """Whether a coefficient of the operator (diffusion, convection, wavenumber) varies in time."""
    return p.depends_on_time(*_operator_values(p))


def _at(p: Problem, cf: Any, t: Any) -> Any:
    """A time-dependent coefficient is re-made at another time parameter."""
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Scalar)
    if form.diffusion and form.diffusion in p.spec["pde"].get("params", {}):
        return p.param(form.diffusion, t=t)
    return cf
