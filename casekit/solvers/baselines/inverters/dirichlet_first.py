"""dirichlet_first: the Dirichlet data of the first boundary part evaluated everywhere."""

import numpy as np

from casekit.solvers.baselines import Inverter, register


def _values(view):  # type: ignore[no-untyped-def]
    entries = [e for _, e in view.data_entries(("dirichlet", "robin", "neumann"))]
    if not entries:
        return np.zeros(len(view.points))
    return view.evaluate(entries[0]["value"], view.points, view.t_end)


register(Inverter("dirichlet_first", "the first boundary datum evaluated everywhere at t_end", _values))
