"""Helmholtz: -Laplace(u) - k^2 u = f."""

from casekit.families.base import Family, Output, Param, Unknown, register
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
    flux_text="du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    outputs=(Output("u", "scalar", "u", "the solution u"),),
    equation="-Laplace(u) - k^2 u = f in the domain",
    consideration=("The operator is indefinite: resolve the wavelength 2*pi/k with several "
                   "cells (pollution error grows with k) and use a direct or suitable solver."),
))
