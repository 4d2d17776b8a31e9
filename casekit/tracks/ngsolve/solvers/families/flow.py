"""Stokes and steady Navier-Stokes on Taylor-Hood elements; Newton for Navier-Stokes from the
Stokes solution at max(nu, 1), with continuation in the viscosity when it does not converge
directly (as the DOLFINx track); without traction parts the pressure's mean is fixed by a Lagrange
multiplier.  In 3-D the velocity space has cell bubbles (see ``flow``)."""

from __future__ import annotations

from functools import partial
from typing import Any

import ngsolve as ng

from casekit.solvers.forms import Flow, form_of
from casekit.tracks.ngsolve.solvers import for_forms
from casekit.tracks.ngsolve.solvers.linalg import Direct, Factor, MeanFree, pressure_constant
from casekit.tracks.ngsolve.solvers.problem import Problem


@for_forms(Flow)
def flow(p: Problem) -> tuple[Any, dict[str, Any]]:
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Flow)
    deg = p.settings.degree
    # in 3-D the velocity has cell bubbles (P2 + bubble / P1): netgen puts a corner of a box in
    # one tetrahedron whose P2 nodes all lie on the boundary, and with velocity given there that
    # corner's pressure function is a spurious mode of Taylor-Hood (8 on the unit cube: UMFPACK
    # cannot factorise); the bubble couples it, and the error's order is unchanged
    V = p.space(deg, vector=True, inner=max(deg, 4) if p.dim == 3 else None)
    Q = ng.H1(p.mesh, order=deg - 1)
    if p.spec["bc"].get("periodic"):
        Q = ng.Periodic(Q)
    pinned = not p.entries("neumann")
    X = V * Q * ng.NumberSpace(p.mesh) if pinned else V * Q
    trial, test = X.TnT()
    (u, pr), (v, q) = trial[:2], test[:2]
    target = float(p.spec["pde"]["params"][form.viscosity])
    nu = ng.Parameter(max(target, 1.0) if form.convective else target)
    robin, data = p.natural_parts(u, v)

    def residual(f: Any, with_data: bool) -> Any:
        terms = (nu * ng.InnerProduct(ng.Grad(u), ng.Grad(v)) - pr * ng.div(v) - q * ng.div(u)
                 - ng.InnerProduct(f, v)) * ng.dx
        if form.convective:
            terms += ng.InnerProduct(ng.Grad(u) * u, v) * ng.dx
        if pinned:
            lam, mu = trial[2], test[2]
            terms += (pr * mu + q * lam) * ng.dx
        a = ng.BilinearForm(X)
        a += terms
        for term in (robin, data if with_data else None):
            if term is not None:
                a += term
        return a

    factor: Factor = Direct
    if pinned:  # the multiplier eliminated from the factorisation (MeanFree: the same solution)
        factor = partial(MeanFree, multiplier=X.Range(2).start, constant=pressure_constant(X, 1))

    a, jacobian = residual(p.forcing(), True), residual(p.zero(p.dim), False)  # see Problem.newton
    gfx = ng.GridFunction(X)
    p.set_dirichlet(gfx.components[0])
    solve = partial(p.newton, a, gfx, spd=False, jacobian=jacobian, factor=factor)  # a saddle point
    if not form.convective:
        return gfx.components[0], {"dofs": X.ndof, "newton_iterations": solve(linear=True), "factorizations": 1}
    # as the DOLFINx track: Newton's first step from rest at the viscosity max(nu, 1) (the Stokes
    # solution but for the convection of the boundary data), then Newton at nu itself; only if that
    # fails, continuation in the viscosity from max(nu, 1) down by factors of 4, a level split where
    # Newton diverges
    levels = [target]
    while levels[0] < 1.0:
        levels.insert(0, min(1.0, levels[0] * 4))
    nu.Set(levels[0])
    iterations = solve(linear=True)
    start = gfx.vec.CreateVector()
    start.data = gfx.vec
    nu.Set(target)
    try:
        iterations += solve(max_iterations=DIRECT_ITERATIONS if len(levels) > 1 else None)
        done = 1
    except RuntimeError:
        if len(levels) == 1:
            raise
        gfx.vec.data = start
        nu.Set(levels[0])
        iterations += solve()
        converged, todo, done, splits = levels[0], levels[1:], 1, 0
        kept = gfx.vec.CreateVector()
        kept.data = gfx.vec
        while todo:  # a level whose Newton diverges is split (geometric mean) from the last one reached
            nu.Set(todo[0])
            try:
                iterations += solve()
            except RuntimeError:
                if splits >= MAX_SPLITS:
                    raise
                splits += 1
                gfx.vec.data = kept
                todo.insert(0, (converged * todo[0]) ** 0.5)
                continue
            converged = todo.pop(0)
            kept.data = gfx.vec
            done += 1
    return gfx.components[0], {"dofs": X.ndof, "newton_iterations": iterations, "continuation_levels": done,
                               "factorizations": p.factorizations}


#: Newton steps at the target viscosity before falling back to continuation (the DOLFINx track's)
DIRECT_ITERATIONS = 10
#: levels a continuation may insert where Newton diverges between two (each halves the step's log):
#: navier_stokes_no_exact_counter_shear_open_sides diverged from nu 0.8 to 0.2 without them
MAX_SPLITS = 8
