"""Convection-diffusion: [du/dt] - epsilon Laplace(u) + beta . grad(u) = f."""

from casekit.families.axes import bc_axis, steady_or_transient
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
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
    flux_coefficient=lambda p: p["epsilon"],
    flux_text="epsilon * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    time_order=1,
    steady_allowed=True,
    outputs=(Output("u", "scalar", "u", "the solution u (at t_end when transient)"),),
    equation=("-epsilon Laplace(u) + beta . grad(u) = f in the domain "
              "(with du/dt added on the left when the case has a time interval)"),
    consideration=("When the mesh Peclet number |beta| h / (2 epsilon) exceeds 1, Galerkin "
                   "oscillates: stabilise (SUPG/streamline diffusion) or refine layers."),
    axes=(
        Axis("peclet", "global Peclet number |beta| L / epsilon: 10 (low), 100 (medium), 1000 (high)", {
            "low": {"params": {"epsilon": lambda c: round(c.size / 10, 6)}},
            "medium": {"params": {"epsilon": lambda c: round(c.size / 100, 6)}},
            "high": {"params": {"epsilon": lambda c: round(c.size / 1000, 6)},
                     "calibration": {"stabilization": "supg", "degree": 1,
                                     "cells_across": lambda c: c.cells_across(160, 24)}},
        }),
        Axis("solution", "smooth, or an outflow boundary layer as thin as the Peclet number allows "
             "(capped so it stays resolvable)", {
                 "smooth": {"solution": {"kind": "trig"}},
                 "layer": {"solution": {"kind": "layer", "options": {
                     "delta": lambda c: max(0.02, round(c.params["epsilon"] / c.size, 4))}}},
             }),
        steady_or_transient({"t_end": 0.5, "factor": "decay", "rate": 1.0}),
        bc_axis("dirichlet", "mixed"),
    ),
    authoring={"params": {"beta": [1.0, 0.5, 0.25]}, "solution": {"kind": "trig"},
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(64, 16),
                               "scheme": "crank_nicolson", "steps": 40}},
))
