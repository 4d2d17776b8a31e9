"""Poisson: -div(kappa grad u) = f."""

import sympy as sp

from casekit.expr import to_text
from casekit.families.axes import bc_axis
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
from casekit.families.calculus import div, dot, grad

register(Family(
    name="poisson",
    title="Poisson equation",
    math_type=("elliptic",),
    unknowns=(Unknown("u", doc="the scalar solution"),),
    params=(Param("kappa", "diffusion coefficient (a number or a positive expression)",
                  kind="field", default=1.0, minimum=0.0, exclusive_minimum=True, positive=True),),
    operator=lambda f, p, dim, tr: {"f": -div(tuple(p["kappa"] * g for g in grad(f["u"], dim)), dim)},
    flux=lambda f, p, n, dim: p["kappa"] * dot(grad(f["u"], dim), n),
    flux_coefficient=lambda p: p["kappa"],
    flux_text="kappa * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    outputs=(Output("u", "scalar", "u", "the solution u"),),
    equation="-div(kappa grad u) = f in the domain",
    consideration=("Variable or high-contrast kappa calls for quadrature that resolves it; "
                   "re-entrant corners reduce the smoothness of u."),
    axes=(
        Axis("coefficient", "diffusion coefficient: constant, smoothly varying, or a 50:1 contrast "
             "across a smooth interface", {
                 "constant": {"params": {"kappa": 1.0}},
                 "variable": {"params": {"kappa": lambda c: to_text(
                     1 + sp.sin(sp.pi * c.unit(0)) * sp.cos(sp.pi * c.unit(1)) / 2)}},
                 "contrast": {"params": {"kappa": lambda c: to_text(
                     1 + 49 * (1 + sp.tanh((c.unit(0) - sp.Rational(1, 2)) * 20)) / 2)},
                              "calibration": {"cells_across": lambda c: c.cells_across(64, 16)}},
             }),
        Axis("solution", "character of the solution", {
            "smooth": {"solution": {"kind": "trig"}},
            "polynomial": {"solution": {"kind": "poly"}},
            "peak": {"solution": {"kind": "gauss", "options": {"width": 0.12}}},
            "oscillatory": {"solution": {"kind": "trig", "options": {"freq": (3, 4)}}},
        }),
        bc_axis("dirichlet", "mixed", "robin"),
    ),
    authoring={"solution": {"kind": "trig"},
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(48, 14)}},
))
