"""Biharmonic: Laplace^2(u) = f, with u and Laplace(u) given on the boundary."""

from casekit.families.base import Axis, Family, Output, Unknown, register
from casekit.families.calculus import lap

register(Family(
    name="biharmonic",
    spatial_order=4,
    title="Biharmonic equation",
    math_type=("elliptic",),
    unknowns=(Unknown("u", doc="the scalar solution"),),
    params=(),
    operator=lambda f, p, dim, tr: {"f": lap(lap(f["u"], dim), dim)},
    bc_kinds=("dirichlet",),
    dirichlet_extra=("laplacian",),
    outputs=(Output("u", "scalar", "u", "the solution u"),),
    equation=("Laplace(Laplace(u)) = f in the domain, with u = value and Laplace(u) = laplacian "
              "given on every boundary part (simply supported plate)"),
    consideration=("A fourth-order problem: use a mixed formulation (w = -Laplace(u)) or a C0 "
                   "interior penalty method; plain C0 Lagrange elements cannot discretise it "
                   "directly."),
    axes=(
        Axis("solution", "character of the solution", {
            "smooth": {"solution": {"kind": "trig"}},
            "polynomial": {"solution": {"kind": "poly", "options": {"degree": 5}}},
            "peak": {"solution": {"kind": "gauss", "options": {"width": 0.15}}},
        }),
    ),
    # the boundary Laplacians of a modulated bubble on a many-sided outline did not print
    authoring={"bc": "dirichlet", "bubble": "constant", "calibration": {"degree": 2, "cells_across": 48}},
))
