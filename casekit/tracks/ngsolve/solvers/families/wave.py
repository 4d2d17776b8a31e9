"""The wave equation as a first-order system in (u, w = u_t), Crank-Nicolson in time (the
average-acceleration Newmark scheme of the other tracks); Dirichlet data on u and on w (their
time derivative), Neumann data c^2 du/dn."""

from __future__ import annotations

from functools import partial
from typing import Any

import ngsolve as ng

from casekit.solvers.forms import Wave, form_of
from casekit.tracks.ngsolve.solvers import for_forms
from casekit.tracks.ngsolve.solvers.linalg import factorise
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
    # the residual is A x + B x_old + d: A (on the new state) is assembled and factorised once, B
    # (on the old state) assembled once (one integral with the same proxies as the old state's
    # linear form had: the same integration rule, so the product is its vector to rounding, for a
    # thousandth of an assembly); d, the mean of forcing and Neumann data at both ends of the step,
    # per step (the data at the new time only: the old end's is the step before's)
    operator = ((u / dt - 0.5 * w) * z + w / dt * v + 0.5 * c2 * ng.grad(u) * ng.grad(v)) * ng.dx
    known = ((-u / dt - 0.5 * w) * z - w / dt * v + 0.5 * c2 * ng.grad(u) * ng.grad(v)) * ng.dx
    data = -p.forcing() * v * ng.dx
    if p.entries("robin"):  # the family allows it; this solver has no damping term for it: say so
        raise ValueError("the NGSolve wave solver has no Robin boundary condition (parts "
                         f"{[e['tag'] for e in p.entries('robin')]}): Dirichlet and Neumann only")
    for e in p.entries("neumann"):
        data += -p.cf(e["value"]) * v * p.ds(e["tag"])
    a, state = ng.BilinearForm(operator), ng.BilinearForm(known).Assemble()
    factor = partial(Split, scalar=fes, c2=c2, dt=dt)
    source = p.step_data(ng.LinearForm(data))  # at t0
    d = gfx.vec.CreateVector()
    for step in range(1, n + 1):
        t_old.Set(p.t0 + (step - 1) * dt)
        p.t.Set(p.t0 + step * dt)
        gfx.vec.data = old.vec
        p.set_dirichlet(gfx.components[0])
        p.set_dirichlet(gfx.components[1], rate=True)
        source.advance()
        d.data = state.mat * old.vec
        d.data += 0.5 * source.now
        d.data += 0.5 * source.before
        p.linear_step(a, gfx, d, spd=False, factor=factor)  # constant c: factorised once for all steps
        old.vec.data = gfx.vec
    return gfx.components[0], {"dofs": X.ndof, "time_steps": n}


class Split:
    """The step's system split into two symmetric positive definite ones of half its size.  On the
    free dofs, with M the mass and K = c^2 (grad, grad), the step solves for (du, dw) (rows of the
    tests v and z)

        K/2 du + M/dt dw = r1,   M/dt du - M/2 dw = r2,

    that is  (K/2 + 2 M/dt^2) du = r1 + 2 r2/dt  and  dw = 2 du/dt - 2 M^-1 r2: two sparse Cholesky
    factorisations (the blocks' integrals have the system's integration rule) where UMFPACK
    factorised the nonsymmetric system whole, and whose two solves per step take a fraction of its
    one (``wave_annulus_exp_profile``, P2, 171k unknowns: 16 of its 38 s were UMFPACK's solves).
    The same solution to rounding, checked on the whole system as any solve is."""

    def __init__(self, mat: Any, fes: Any, spd: bool, what: str, *, scalar: Any, c2: float, dt: float) -> None:
        u, v = scalar.TnT()
        s = ng.BilinearForm((0.5 * c2 * ng.grad(u) * ng.grad(v) + 2.0 / dt**2 * u * v) * ng.dx).Assemble()
        m = ng.BilinearForm(u * v * ng.dx).Assemble()
        free = scalar.FreeDofs()
        self.schur, self.mass = factorise(s.mat, free, True, what), factorise(m.mat, free, True, what)
        self.n, self.dt, self.method = scalar.ndof, dt, "sparse Cholesky (the system split in two)"
        self.rhs, self.du, self.mr = (ng.GridFunction(scalar).vec for _ in range(3))

    def solve(self, r: Any, out: Any) -> None:
        n, dt, rv = self.n, self.dt, r.FV().NumPy()
        self.rhs.FV().NumPy()[:] = rv[:n] + 2.0 / dt * rv[n:]
        self.du.data = self.schur * self.rhs
        self.rhs.FV().NumPy()[:] = rv[n:]
        self.mr.data = self.mass * self.rhs
        du, x = self.du.FV().NumPy(), out.FV().NumPy()
        x[:n] = du
        x[n:] = 2.0 / dt * du - 2.0 * self.mr.FV().NumPy()
