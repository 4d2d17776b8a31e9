"""Steady Navier-Stokes on Taylor-Hood elements by Newton's method from the Stokes solution,
with continuation in the viscosity when Newton does not converge directly."""

from __future__ import annotations

import ufl
from dolfinx import fem
from petsc4py import PETSc

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.families.stokes import saddle_point, taylor_hood
from casekit.tracks.dolfinx.solvers.linalg import Newton, Stats, solve_linear
from casekit.tracks.dolfinx.solvers.problem import Problem, add

#: Newton steps at the target viscosity before falling back to continuation
DIRECT_ITERATIONS = 10


@family("navier_stokes")
def navier_stokes(p: Problem) -> Result:
    nu_target = p.number("nu")
    W, pin = taylor_hood(p)
    bcs = p.dirichlets(W.sub(0))
    stats = Stats()
    (u_, p_), (v_, q_) = ufl.TrialFunctions(W), ufl.TestFunctions(W)
    nu = fem.Constant(p.mesh, max(nu_target, 1.0))
    f_v = add(ufl.inner(p.forcing(), v_) * p.dx, p.neumann_terms(v_))
    a = (nu * ufl.inner(ufl.grad(u_), ufl.grad(v_)) - p_ * ufl.div(v_) - q_ * ufl.div(u_)) * p.dx
    w = solve_linear(p, a, f_v, W, bcs, stats, pin=pin, saddle=saddle_point(p, W, nu))
    u, pr = ufl.split(w)
    v, q = ufl.TestFunctions(W)
    F = (nu * ufl.inner(ufl.grad(u), ufl.grad(v)) + ufl.inner(ufl.grad(u) * u, v) - pr * ufl.div(v)
         - q * ufl.div(u)) * p.dx - add(ufl.inner(p.forcing(), v) * p.dx, p.neumann_terms(v))
    solver = Newton(p, F, w, bcs, stats, pin=pin)
    stokes = w.x.array.copy()
    nu.value = nu_target
    try:  # a Newton iteration that converges does so in a few steps
        solver.solve(DIRECT_ITERATIONS)
        return Result(w.sub(0).collapse(), {**stats.info(), "continuation_levels": 1})
    except (RuntimeError, PETSc.Error):
        w.x.array[:] = stokes
        w.x.scatter_forward()
    levels = [nu_target]
    while levels[0] < 1.0:
        levels.insert(0, min(1.0, levels[0] * 4))
    done: list[float] = []  # continuation 1, ..., nu; a level Newton cannot reach from the last is split
    converged = w.x.array.copy()
    while levels:
        nu.value = levels[0]
        try:
            solver.solve()
        except RuntimeError as exc:
            if not done or len(done) + len(levels) >= MAX_LEVELS:
                raise RuntimeError(f"{exc} at viscosity {levels[0]:.4g} (continuation {done})") from None
            w.x.array[:] = converged
            w.x.scatter_forward()
            levels.insert(0, (done[-1] * levels[0]) ** 0.5)
            continue
        converged[:] = w.x.array
        done.append(levels.pop(0))
    return Result(w.sub(0).collapse(), {**stats.info(), "continuation_levels": len(done)})


#: most viscosity levels of one continuation
MAX_LEVELS = 16
