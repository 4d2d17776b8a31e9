"""Stokes: -nu Laplace(u) + grad(p) = f, div(u) = 0."""

from casekit.families.axes import bc_axis
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
from casekit.families.calculus import div, grad, jacobian, matvec, vlap


def fluid_traction(f: dict, p: dict, n: tuple, dim: int) -> tuple:
    """nu (grad u) n - p n."""
    gun = matvec(jacobian(f["u"], dim), n)
    return tuple(p["nu"] * a - f["p"] * ni for a, ni in zip(gun, n, strict=True))


register(Family(
    name="stokes",
    min_degree=2,
    title="Stokes flow",
    math_type=("incompressible_flow",),
    unknowns=(Unknown("u", vector=True, doc="the velocity"), Unknown("p", doc="the pressure")),
    params=(Param("nu", "kinematic viscosity", default=1.0, minimum=0.0, maximum=100.0,
                  exclusive_minimum=True),),
    operator=lambda f, p, dim, tr: {"f": tuple(
        -p["nu"] * a + b for a, b in zip(vlap(f["u"], dim), grad(f["p"], dim), strict=True))},
    constraints=lambda f, p, dim: {"div(u)": div(f["u"], dim)},
    flux=fluid_traction,
    flux_text="nu (grad u) n - p n",
    bc_kinds=("dirichlet", "neumann", "periodic"),
    outputs=(Output("velocity_magnitude", "magnitude", "u", "|u|"),
             Output("velocity", "components", "u", "the velocity components")),
    equation="-nu Laplace(u) + grad(p) = f and div(u) = 0 in the domain",
    consideration=("Use an inf-sup stable pair (e.g. Taylor-Hood P2/P1); with velocity given on "
                   "the whole boundary the pressure is fixed only up to a constant."),
    axes=(
        Axis("viscosity", "kinematic viscosity: 1 or 0.01 (pressure dominates the balance)", {
            "unit": {"params": {"nu": 1.0}},
            "small": {"params": {"nu": 0.01}},
        }),
        Axis("solution", "stream function of the velocity: trigonometric or polynomial", {
            "smooth": {"solution": {"kind": "trig"}},
            "polynomial": {"solution": {"kind": "poly", "options": {"degree": 4}}},
        }),
        bc_axis("dirichlet", "mixed"),
    ),
    authoring={"solution": {"kind": "trig"}, "pressure": {"kind": "trig"},
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(40, 10)}},
))
