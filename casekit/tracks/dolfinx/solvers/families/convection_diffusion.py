"""Convection-diffusion: [u_t] - eps Laplace(u) + beta . grad(u) = f, with optional SUPG."""

from __future__ import annotations

import ufl
from dolfinx import fem

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.linalg import Stats, solve_linear
from casekit.tracks.dolfinx.solvers.problem import Problem, add
from casekit.tracks.dolfinx.solvers.timestep import integrate


def supg_tau(p: Problem, eps: float, beta: object) -> object:
    """The classic SUPG parameter h/(2|beta|) (coth(Pe_h) - 1/Pe_h), Pe_h = |beta| h / (2 eps)."""
    bnorm = ufl.sqrt(ufl.inner(beta, beta))
    pe = bnorm * p.h / (2 * eps)
    return p.h / (2 * bnorm) * (1 / ufl.tanh(pe) - 1 / pe)


@family("convection_diffusion")
def convection_diffusion(p: Problem) -> Result:
    eps, beta = p.number("epsilon"), p.vector("beta")
    V = fem.functionspace(p.mesh, ("Lagrange", p.settings.degree))
    supg = p.settings.stabilization == "supg"
    tau = supg_tau(p, eps, beta) if supg else None

    def strong(u, t):  # type: ignore[no-untyped-def]
        return -eps * ufl.div(ufl.grad(u)) + ufl.inner(beta, ufl.grad(u)) - p.forcing(t=t)

    def residual(u, v, t):  # type: ignore[no-untyped-def]
        ra, rL = p.boundary_load(u, v, t)
        form = (eps * ufl.inner(ufl.grad(u), ufl.grad(v)) + ufl.inner(beta, ufl.grad(u)) * v
                - p.forcing(t=t) * v) * p.dx
        if supg:
            form += tau * ufl.inner(beta, ufl.grad(v)) * strong(u, t) * p.dx
        return add(form, ra, -rL if rL is not None else None)

    stats = Stats()
    if p.transient:
        u = integrate(p, V, residual, stats, linear=True)
    else:
        a, L = ufl.system(residual(ufl.TrialFunction(V), ufl.TestFunction(V), p.t))
        u = solve_linear(p, a, L, V, p.dirichlets(V), stats)
    return Result(u, {**stats.info(), "stabilization": "supg" if supg else "none"})
