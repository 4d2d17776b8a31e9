"""Convection-diffusion: [du/dt] - epsilon Laplace(u) + beta . grad(u) = f."""

from casekit.families.base import Family, Output, Param, Unknown, register
from casekit.families.calculus import dot, dt, grad, lap

register(Family(
    name="convection_diffusion",
    title="Convection-diffusion equation",
    math_type=("elliptic",),
    transient_math_type=("parabolic",),
    unknowns=(Unknown("u", doc="the transported scalar"),),
    params=(Param("epsilon", "diffusion coefficient", default=0.01, minimum=0.0, maximum=10.0,
                  exclusive_minimum=True),
            Param("beta", "velocity field (a constant vector)", kind="vector", default=[1.0, 0.0])),
    operator=lambda f, p, dim, tr: {
        "f": (dt(f["u"]) if tr else 0) - p["epsilon"] * lap(f["u"], dim)
        + dot(p["beta"], grad(f["u"], dim))},
    flux=lambda f, p, n, dim: p["epsilon"] * dot(grad(f["u"], dim), n),
    flux_text="epsilon * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    time_order=1,
    steady_allowed=True,
    outputs=(Output("u", "scalar", "u", "the solution u (at t_end when transient)"),),
    equation=("-epsilon Laplace(u) + beta . grad(u) = f in the domain "
              "(with du/dt added on the left when the case has a time interval)"),
    consideration=("When the mesh Peclet number |beta| h / (2 epsilon) exceeds 1, Galerkin "
                   "oscillates: stabilise (SUPG/streamline diffusion) or refine layers."),
))
