"""Poisson: -div(kappa grad u) = f."""

from casekit.families.base import Family, Output, Param, Unknown, register
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
    flux_text="kappa * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    outputs=(Output("u", "scalar", "u", "the solution u"),),
    equation="-div(kappa grad u) = f in the domain",
    consideration=("Variable or high-contrast kappa calls for quadrature that resolves it; "
                   "re-entrant corners reduce the smoothness of u."),
))
