"""Wave: d2u/dt2 - c^2 Laplace(u) = f, with u and du/dt given at t0."""

from casekit.families.axes import bc_axis, horizon_axis
from casekit.families.base import Axis, Family, Output, Param, Unknown, register
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
    flux_coefficient=lambda p: p["c"] ** 2,
    flux_text="c^2 * du/dn",
    bc_kinds=("dirichlet", "neumann", "robin", "periodic"),
    time_order=2,
    needs_dirichlet=False,
    outputs=(Output("u", "scalar", "u", "the solution u at t_end"),),
    equation=("d2u/dt2 - c^2 Laplace(u) = f for t0 < t <= t_end, with u = u0 and du/dt = v0 "
              "at t0"),
    consideration=("Use an energy-conserving or second-order scheme (Newmark average "
                   "acceleration, leapfrog under a CFL limit c dt / h < 1)."),
    axes=(
        Axis("speed", "wave speed: slow (0.5) or fast (2)", {
            "slow": {"params": {"c": 0.5}},
            "fast": {"params": {"c": 2.0}, "calibration": {"steps": 160}},
        }),
        horizon_axis({"t_end": 0.5, "factor": "standing", "rate": 5.0},
                     {"t_end": 2.0, "factor": "standing", "rate": 1.25}),
        bc_axis("dirichlet", "mixed"),
    ),
    authoring={"solution": {"kind": "trig"},
               "calibration": {"degree": 2, "cells_across": lambda c: c.cells_across(40, 12),
                               "scheme": "newmark", "steps": 100}},
))
