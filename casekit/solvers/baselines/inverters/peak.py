"""peak: the ``exp`` and ``tanh`` factors of the forcing and initial data, plus a linear
background, fitted to the boundary data.

A Gaussian's centre and width are printed in the ``exp`` of its forcing (and a front's in its
``tanh``); the solution is that factor times an amplitude on a background."""

import numpy as np

from casekit.solvers.baselines import Inverter, register
from casekit.solvers.baselines.visible import atoms

_READ = ("exp(", "tanh(")


def _fields(view):  # type: ignore[no-untyped-def]
    sources = [v for v in (view.forcing, view.initial) if v is not None and not isinstance(v, list)]
    found = [a for text, a in atoms(sources, view.dim) if text.startswith(_READ)]
    fields = [lambda p, a=a: a(p, view.t_end) for a in found]
    return fields + [lambda p: np.ones(len(p))] + [lambda p, i=i: p[:, i] for i in range(view.dim)]


def _applies(view):  # type: ignore[no-untyped-def]
    text = str(view.forcing) + str(view.initial)
    return bool(view.dirichlet) and any(r in text for r in _READ)


register(Inverter("peak", "exp/tanh factors of the forcing plus a linear background, fitted to the Dirichlet data",
                  lambda view: view.fit_on_boundary(_fields(view), view.t_end), applies=_applies))
