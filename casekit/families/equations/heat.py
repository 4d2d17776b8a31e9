"""Heat: du/dt - div(kappa grad u) = f."""

import sympy as sp

from casekit.expr import to_text
from casekit.families.axes import bc_axis, horizon_axis
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
from casekit.families.calculus import div, dot, dt, grad

register(Family(
    name="heat",
    title="Heat equation",
    math_type=("parabolic",),
    unknowns=(Unknown("u", doc="the temperature"),),
    params=(Param("kappa", "diffusivity (a number or a positive expression)", kind="field",
                  default=1.0, minimum=0.0, exclusive_minimum=True, positive=True),),
    operator=lambda f, p, dim, tr: {
        "f": dt(f["u"]) - div(tuple(p["kappa"] * g for g in grad(f["u"], dim)), dim)},
    flux=lambda f, p, n, dim: p["kappa"] * dot(grad(f["u"], dim), n),
    flux_coefficient=lambda p: p["kappa"],
    flux_text="kappa * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    time_order=1,
    outputs=(Output("u", "scalar", "u", "the solution u at t_end"),),
    equation="du/dt - div(kappa grad u) = f in the domain for t0 < t <= t_end, u = u0 at t0",
    consideration=("Balance the time-step error with the spatial error (a second-order scheme "
                   "such as Crank-Nicolson or BDF2 allows larger steps)."),
    axes=(
        Axis("coefficient", "diffusivity: constant or smoothly varying", {
            "constant": {"params": {"kappa": 1.0}},
            "variable": {"params": {"kappa": lambda c: to_text(
                1 + sp.sin(sp.pi * c.unit(0)) * sp.sin(sp.pi * c.unit(1)) / 2)}},
        }),
        horizon_axis({"t_end": 0.1, "factor": "decay", "rate": 5.0},
                     {"t_end": 1.0, "factor": "oscillate", "rate": 1.5}),
        Axis("solution", "character of the solution", {
            "smooth": {"solution": {"kind": "trig"}},
            "peak": {"solution": {"kind": "gauss", "options": {"width": 0.15}}},
        }),
        bc_axis("dirichlet", "mixed", "robin"),
    ),
    authoring={"solution": {"kind": "trig"},
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(40, 12),
                               "scheme": "crank_nicolson", "steps": 40}},
))
