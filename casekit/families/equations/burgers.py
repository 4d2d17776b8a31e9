"""Viscous Burgers (scalar): du/dt + u (grad(u) . b) - nu Laplace(u) = f."""

from casekit.families.axes import bc_axis, horizon_axis
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
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
    flux_coefficient=lambda p: p["nu"],
    flux_text="nu * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    time_order=1,
    outputs=(Output("u", "scalar", "u", "the solution u at t_end"),),
    equation="du/dt + u (grad(u) . b) - nu Laplace(u) = f for t0 < t <= t_end, u = u0 at t0",
    consideration=("Small nu gives steep fronts: treat the nonlinearity implicitly (Newton) or "
                   "semi-implicitly and keep the CFL number |u| dt / h moderate."),
    axes=(
        Axis("viscosity", "viscosity: moderate (0.1) or low (0.01, steep gradients)", {
            "moderate": {"params": {"nu": 0.1}},
            "low": {"params": {"nu": 0.01},
                    "calibration": {"cells_across": lambda c: c.cells_across(96, 20)}},
        }),
        horizon_axis({"t_end": 0.25, "factor": "grow", "rate": 8.0},
                     {"t_end": 1.0, "factor": "decay", "rate": 1.0}),
        Axis("solution", "character of the solution", {
            "smooth": {"solution": {"kind": "trig"}},
            "front": {"solution": {"kind": "front", "options": {"delta": 0.1}}},
        }),
        bc_axis("dirichlet", "mixed"),
    ),
    # the nonlinear term multiplies the solution by its gradient: a wave-modulated bubble, or a third
    # time mode, made the expanded forcing too long to print
    authoring={"params": {"b": [1.0, 1.0, 1.0]}, "solution": {"kind": "trig"}, "bubble": "constant", "modes": 2,
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(48, 14),
                               "scheme": "bdf2", "steps": 80, "newton_rtol": 1e-10}},
))
