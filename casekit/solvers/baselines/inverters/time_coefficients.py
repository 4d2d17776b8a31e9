"""time_coefficients: the forcing's spatial coefficients, combined to fit the boundary data.

The forcing of ``u = sum_k M_k(x) phi_k(t)`` is ``sum_k c_k(x) psi_k(t)``; sympy separates it
(``casekit.solvers.baselines.visible.time_coefficients``).  With ``sin(w t)`` in u, the
coefficient of ``cos(w t)`` is the shape itself.  This inverter fits the coefficients, the
initial data and a constant to the Dirichlet data at t_end."""

import numpy as np

from casekit.solvers.baselines import Inverter, register
from casekit.solvers.baselines.visible import time_coefficients


def _fields(view):  # type: ignore[no-untyped-def]
    fields = [c for _, c in time_coefficients(view.forcing, view.dim)] if not isinstance(view.forcing, list) else []
    if view.initial is not None:
        fields.append(lambda p: view.evaluate(view.initial, p, view.t0))
    return [*fields, lambda p: np.ones(len(p))]


register(Inverter("time_coefficients", "the forcing's time coefficients and the initial data, fitted to the "
                  "Dirichlet data at t_end", lambda view: view.fit_on_boundary(_fields(view), view.t_end),
                  applies=lambda view: view.transient and bool(view.dirichlet)))
