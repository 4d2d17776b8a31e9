"""scaled_initial: the initial data times the ratio a boundary datum shows between t0 and t_end.

Exact for every separable solution ``X(x) T(t)``: then ``u(t_end) = u0 * T(t_end) / T(t0)`` and
any Dirichlet datum ``g(p, t) = X(p) T(t)`` gives the ratio (here by least squares over all
Dirichlet samples)."""

import numpy as np

from casekit.solvers.baselines import Inverter, register


def _values(view):  # type: ignore[no-untyped-def]
    g0, g1 = np.ravel(view.boundary_values(view.t0)), np.ravel(view.boundary_values(view.t_end))
    denominator = float(g0 @ g0)
    ratio = float(g0 @ g1) / denominator if denominator > 0 else 1.0
    return ratio * view.evaluate(view.initial, view.points, view.t0)


register(Inverter("scaled_initial", "the initial data scaled by the ratio g(t_end)/g(t0) of the Dirichlet data",
                  _values, applies=lambda view: view.initial is not None and bool(view.dirichlet)))
