"""Steady Navier-Stokes: -nu Laplace(u) + (u . grad) u + grad(p) = f, div(u) = 0."""

from casekit.families.axes import bc_axis
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
from casekit.families.calculus import advect, div, grad, vlap
from casekit.families.equations.stokes import fluid_traction

register(Family(
    name="navier_stokes",
    min_degree=2,
    title="Steady incompressible Navier-Stokes flow",
    math_type=("incompressible_flow",),
    unknowns=(Unknown("u", vector=True, doc="the velocity"), Unknown("p", doc="the pressure")),
    params=(Param("nu", "kinematic viscosity", default=0.1, minimum=0.0, maximum=100.0,
                  exclusive_minimum=True),),
    operator=lambda f, p, dim, tr: {"f": tuple(
        -p["nu"] * a + c + b for a, c, b in zip(
            vlap(f["u"], dim), advect(f["u"], f["u"], dim), grad(f["p"], dim), strict=True))},
    constraints=lambda f, p, dim: {"div(u)": div(f["u"], dim)},
    flux=fluid_traction,
    flux_text="nu (grad u) n - p n",
    bc_kinds=("dirichlet", "neumann", "periodic"),
    outputs=(Output("velocity_magnitude", "magnitude", "u", "|u|"),
             Output("velocity", "components", "u", "the velocity components")),
    equation="-nu Laplace(u) + (u . grad) u + grad(p) = f and div(u) = 0 in the domain",
    consideration=("Solve the nonlinear system with Newton's method (continuation in nu helps at "
                   "higher Reynolds numbers) on an inf-sup stable pair such as Taylor-Hood."),
    axes=(
        Axis("reynolds", "Reynolds number U L / nu with U, L ~ 1: 1 (low), 10 (medium), 100 (high)", {
            "low": {"params": {"nu": 1.0}},
            "medium": {"params": {"nu": 0.1}},
            "high": {"params": {"nu": 0.01},
                     "calibration": {"cells_across": lambda c: c.cells_across(64, 12)}},
        }),
        Axis("solution", "stream function of the velocity: trigonometric or polynomial", {
            "smooth": {"solution": {"kind": "trig"}},
            "polynomial": {"solution": {"kind": "poly", "options": {"degree": 4}}},
        }),
        bc_axis("dirichlet", "mixed"),
    ),
    traction_inflow_limit=("nu", 200.0),
    authoring={"solution": {"kind": "trig"}, "pressure": {"kind": "trig"},
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(40, 10),
                               "newton_rtol": 1e-10, "max_newton_iterations": 30}},
))
