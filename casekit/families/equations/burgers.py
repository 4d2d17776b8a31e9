"""Viscous Burgers (scalar): du/dt + u (grad(u) . b) - nu Laplace(u) = f."""

from casekit.families.base import Family, Output, Param, Unknown, register
from casekit.families.calculus import dot, dt, grad, lap

register(Family(
    name="burgers",
    title="Viscous Burgers equation",
    math_type=("parabolic",),
    unknowns=(Unknown("u", doc="the transported scalar"),),
    params=(Param("nu", "viscosity", default=0.01, minimum=0.0, maximum=10.0,
                  exclusive_minimum=True),
            Param("b", "direction of the nonlinear transport (a constant vector)", kind="vector",
                  default=[1.0, 1.0])),
    operator=lambda f, p, dim, tr: {
        "f": dt(f["u"]) + f["u"] * dot(grad(f["u"], dim), p["b"]) - p["nu"] * lap(f["u"], dim)},
    flux=lambda f, p, n, dim: p["nu"] * dot(grad(f["u"], dim), n),
    flux_text="nu * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    time_order=1,
    outputs=(Output("u", "scalar", "u", "the solution u at t_end"),),
    equation="du/dt + u (grad(u) . b) - nu Laplace(u) = f for t0 < t <= t_end, u = u0 at t0",
    consideration=("Small nu gives steep fronts: treat the nonlinearity implicitly (Newton) or "
                   "semi-implicitly and keep the CFL number |u| dt / h moderate."),
))
