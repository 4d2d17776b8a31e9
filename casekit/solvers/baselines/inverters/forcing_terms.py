"""forcing_terms: every additive term of the expanded forcing and initial data, its number
dropped, plus a linear background, fitted to the Dirichlet data at t_end.

A manufactured solution's terms reappear in its forcing (the Laplacian of ``x sin(2x)`` has the
term ``x sin(2x)``), and the boundary data pick their weights: exact for every solution the boundary
determines within that dictionary.  What vanishes on the boundary (``casekit.authoring.catalogue
.bubble``) no such fit recovers."""

import numpy as np

from casekit.solvers.baselines import Inverter, register
from casekit.solvers.baselines.visible import printed, terms


def _fields(view):  # type: ignore[no-untyped-def]
    found = [lambda p, f=f: f(p, view.t_end) for _, f in terms(printed(view), view.dim)]
    return found + [lambda p: np.ones(len(p))] + [lambda p, i=i: p[:, i] for i in range(view.dim)]


register(Inverter("forcing_terms", "the forcing's and initial data's additive terms (numbers dropped) plus a "
                  "linear background, fitted to the Dirichlet data at t_end",
                  lambda view: view.fit_on_boundary(_fields(view), view.t_end),
                  applies=lambda view: bool(view.dirichlet)))
