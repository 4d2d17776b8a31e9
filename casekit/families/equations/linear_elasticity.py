"""Linear elasticity: -div(sigma(u)) = f, sigma = lambda tr(eps) I + 2 mu eps (plane strain)."""

import sympy as sp

from casekit.families.axes import bc_axis
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
from casekit.families.calculus import div, jacobian, matvec, row_div


def lame(p: dict) -> tuple[sp.Expr, sp.Expr]:
    e, nu = p["E"], p["nu"]
    return e * nu / ((1 + nu) * (1 - 2 * nu)), e / (2 * (1 + nu))


def stress(u: tuple, p: dict, dim: int) -> list[list[sp.Expr]]:
    lam, mu = lame(p)
    j = jacobian(u, dim)
    tr = div(u, dim)
    return [[lam * tr * sp.Integer(int(i == k)) + mu * (j[i][k] + j[k][i]) for k in range(dim)] for i in range(dim)]


register(Family(
    name="linear_elasticity",
    title="Linear elasticity",
    math_type=("elliptic",),
    unknowns=(Unknown("u", vector=True, doc="the displacement"),),
    params=(Param("E", "Young's modulus", default=1.0, minimum=0.0, exclusive_minimum=True),
            Param("nu", "Poisson's ratio (plane strain in 2-D)", default=0.3, minimum=0.0,
                  maximum=0.499)),
    operator=lambda f, p, dim, tr: {"f": tuple(-c for c in row_div(stress(f["u"], p, dim), dim))},
    flux=lambda f, p, n, dim: matvec(stress(f["u"], p, dim), n),
    flux_text="sigma(u) n (traction)",
    bc_kinds=("dirichlet", "neumann"),
    outputs=(Output("displacement_magnitude", "magnitude", "u", "|u|"),
             Output("displacement", "components", "u", "the displacement components")),
    equation=("-div(sigma(u)) = f with sigma(u) = lambda tr(eps(u)) I + 2 mu eps(u), "
              "eps(u) = (grad u + grad u^T)/2, lambda = E nu/((1+nu)(1-2nu)), mu = E/(2(1+nu))"),
    consideration=("For nu close to 1/2 displacement-only low-order elements lock; use higher "
                   "degree or a mixed displacement-pressure formulation."),
    axes=(
        Axis("compressibility", "Poisson's ratio: compressible (0.3) or nearly incompressible (0.49)", {
            "compressible": {"params": {"nu": 0.3}},
            "nearly_incompressible": {"params": {"nu": 0.49},
                                      "calibration": {"degree": 3}},
        }),
        Axis("solution", "character of the displacement", {
            "smooth": {"solution": {"kind": "trig"}},
            "polynomial": {"solution": {"kind": "poly"}},
        }),
        bc_axis("dirichlet", "mixed"),
    ),
    authoring={"params": {"E": 1.0}, "solution": {"kind": "trig"},
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(40, 10)}},
))
