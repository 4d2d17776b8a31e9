"""Reaction-diffusion: [du/dt] - epsilon Laplace(u) + R(u) = f."""

from casekit.expr import param_symbol
from casekit.families.base import Family, Output, Param, Unknown, register
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
))
