"""Reaction-diffusion: [du/dt] - epsilon Laplace(u) + R(u) = f."""

from casekit.expr import param_symbol
from casekit.families.axes import bc_axis, steady_or_transient
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
from casekit.families.calculus import dot, dt, grad, lap


def _reaction(p: dict, u: object) -> object:
    return p["reaction"].subs(param_symbol("u"), u)


register(Family(
    name="reaction_diffusion",
    title="Reaction-diffusion equation",
    math_type=("reaction_diffusion",),
    unknowns=(Unknown("u", doc="the concentration"),),
    params=(Param("epsilon", "diffusion coefficient", default=0.1, minimum=0.0, maximum=10.0,
                  exclusive_minimum=True),
            Param("reaction", "reaction term R(u), an expression in u (and x, y, z)",
                  kind="reaction", default="u")),
    operator=lambda f, p, dim, tr: {
        "f": (dt(f["u"]) if tr else 0) - p["epsilon"] * lap(f["u"], dim) + _reaction(p, f["u"])},
    flux=lambda f, p, n, dim: p["epsilon"] * dot(grad(f["u"], dim), n),
    flux_coefficient=lambda p: p["epsilon"],
    flux_text="epsilon * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    time_order=1,
    steady_allowed=True,
    needs_dirichlet=False,
    outputs=(Output("u", "scalar", "u", "the solution u (at t_end when transient)"),),
    equation=("-epsilon Laplace(u) + R(u) = f in the domain "
              "(with du/dt added on the left when the case has a time interval)"),
    consideration=("A nonlinear R(u) needs Newton's method (or a semi-implicit treatment in "
                   "time); stiff reaction terms limit explicit time steps."),
    axes=(
        Axis("reaction", "reaction term: linear decay, Allen-Cahn cubic, or logistic (Fisher-KPP)", {
            # two modes' time coefficients nearly span the answer for a linear or quadratic reaction
            # (the span check refuses them): those keep three; the cube multiplies three modes past the
            # size limits
            "linear": {"params": {"reaction": "2*u"}, "modes": 3},
            "cubic": {"params": {"reaction": "u**3 - u"}},
            "logistic": {"params": {"reaction": "-u*(1 - u)"}, "modes": 3},
        }),
        Axis("stiffness", "diffusion relative to reaction: mild (epsilon 0.1) or stiff (0.005)", {
            "mild": {"params": {"epsilon": 0.1}},
            "stiff": {"params": {"epsilon": 0.005},
                      "calibration": {"cells_across": lambda c: c.cells_across(96, 20)}},
        }),
        steady_or_transient({"t_end": 0.5, "factor": "decay", "rate": 1.0}),
        bc_axis("dirichlet", "robin"),
    ),
    # the reaction's powers of the solution multiply the bubble by itself: unmodulated and with two
    # time modes, the expanded forcing stays printable on more outlines
    authoring={"solution": {"kind": "trig"}, "bubble": "constant", "modes": 2,
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(48, 14),
                               "scheme": "crank_nicolson", "steps": 40, "newton_rtol": 1e-10}},
))
