"""Helmholtz: -Laplace(u) - k^2 u = f."""

import math

import sympy as sp

from casekit.families.axes import bc_axis
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
from casekit.families.calculus import dot, grad, lap

register(Family(
    name="helmholtz",
    title="Helmholtz equation",
    math_type=("elliptic",),
    unknowns=(Unknown("u", doc="the scalar solution"),),
    params=(Param("k", "wavenumber", default=10.0, minimum=0.0, maximum=200.0,
                  exclusive_minimum=True),),
    operator=lambda f, p, dim, tr: {"f": -lap(f["u"], dim) - p["k"] ** 2 * f["u"]},
    flux=lambda f, p, n, dim: dot(grad(f["u"], dim), n),
    flux_coefficient=lambda p: sp.Integer(1),
    flux_text="du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    outputs=(Output("u", "scalar", "u", "the solution u"),),
    equation="-Laplace(u) - k^2 u = f in the domain",
    consideration=("The operator is indefinite: resolve the wavelength 2*pi/k with several "
                   "cells (pollution error grows with k) and use a direct or suitable solver."),
    axes=(
        Axis("wavenumber", "wavelengths across the domain: 1 (low), 3 (medium), 6 (high)", {
            "low": {"params": {"k": lambda c: round(2 * math.pi * 1 / c.size, 2)}},
            # P2 pollution: about 8 cells per wavelength keep e_base near 1e-2 (14 cells across the
            # cube, under 5 per wavelength, gave 4e-2 on DOLFINx and 7e-2 on NGSolve)
            "medium": {"params": {"k": lambda c: round(2 * math.pi * 3 / c.size, 2)},
                       "calibration": {"cells_across": lambda c: c.cells_across(64, 24)}},
            "high": {"params": {"k": lambda c: round(2 * math.pi * 6 / c.size, 2)},
                     "calibration": {"cells_across": lambda c: c.cells_across(96, 20)}},
        }),
        Axis("solution", "smooth, or a plane wave at the case's wavenumber", {
            "smooth": {"solution": {"kind": "trig"}},
            "oscillatory": {"solution": {"kind": "plane_wave",
                                         "options": {"k": lambda c: 0.9 * c.params["k"]}}},
        }),
        bc_axis("dirichlet", "robin", "mixed"),
    ),
    authoring={"solution": {"kind": "trig"},
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(64, 14)}},
))
