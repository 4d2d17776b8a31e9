"""span_fit: each small span of visible fields (``casekit.solvers.baselines.visible.spans``)
fitted to the Dirichlet data at t_end; the span whose fit matches the data best.

The realistic counterpart of the span leak check, whose oracle fit uses the hidden field."""

import numpy as np

from casekit.solvers.baselines import Inverter, register
from casekit.solvers.baselines.visible import spans


def _values(view):  # type: ignore[no-untyped-def]
    data = view.boundary_values(view.t_end)
    best, best_misfit = np.zeros(len(view.points)), np.inf
    for fields in spans(view).values():
        values = view.fit_on_boundary([f.values for f in fields], view.t_end)
        on_boundary = view.fit_on_boundary([f.values for f in fields], view.t_end, at=view.boundary_points)
        misfit = float(np.linalg.norm(np.ravel(on_boundary) - np.ravel(data)))
        if misfit < best_misfit:
            best, best_misfit = values, misfit
    return best


register(Inverter("span_fit", "the visible span that best fits the Dirichlet data at t_end, fitted to them",
                  _values, applies=lambda view: bool(view.dirichlet)))
