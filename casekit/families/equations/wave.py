"""Wave: d2u/dt2 - c^2 Laplace(u) = f, with u and du/dt given at t0."""

from casekit.families.base import Family, Output, Param, Unknown, register
from casekit.families.calculus import dot, dt, grad, lap

register(Family(
    name="wave",
    title="Wave equation",
    math_type=("hyperbolic",),
    unknowns=(Unknown("u", doc="the displacement"),),
    params=(Param("c", "wave speed", default=1.0, minimum=0.0, maximum=100.0,
                  exclusive_minimum=True),),
    operator=lambda f, p, dim, tr: {"f": dt(f["u"], 2) - p["c"] ** 2 * lap(f["u"], dim)},
    flux=lambda f, p, n, dim: p["c"] ** 2 * dot(grad(f["u"], dim), n),
    flux_text="c^2 * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    time_order=2,
    needs_dirichlet=False,
    outputs=(Output("u", "scalar", "u", "the solution u at t_end"),),
    equation=("d2u/dt2 - c^2 Laplace(u) = f for t0 < t <= t_end, with u = u0 and du/dt = v0 "
              "at t0"),
    consideration=("Use an energy-conserving or second-order scheme (Newmark average "
                   "acceleration, leapfrog under a CFL limit c dt / h < 1)."),
))
