"""atom_pairs: the function atoms of the forcing and initial data (each ``sin(...)``,
``exp(...)``, ...), their pairwise products and a linear background, fitted to the Dirichlet data
at t_end.

A solution that is a sum of products of two atoms (``sin(pi x) sin(pi y)``) is in this dictionary
whatever its forcing's numbers; the boundary data pick the weights."""

import numpy as np

from casekit.solvers.baselines import Inverter, register
from casekit.solvers.baselines.visible import atoms, printed

#: most atoms paired (the dictionary grows with the square)
MAX_ATOMS = 12


def _fields(view):  # type: ignore[no-untyped-def]
    found = [a for _, a in atoms(printed(view), view.dim)][:MAX_ATOMS]
    t = view.t_end
    fields = [lambda p, a=a: a(p, t) for a in found]
    fields += [lambda p, a=a, b=b: a(p, t) * b(p, t) for i, a in enumerate(found) for b in found[i:]]
    return fields + [lambda p: np.ones(len(p))] + [lambda p, i=i: p[:, i] for i in range(view.dim)]


register(Inverter("atom_pairs", "the forcing's function atoms and their pairwise products plus a linear "
                  "background, fitted to the Dirichlet data at t_end",
                  lambda view: view.fit_on_boundary(_fields(view), view.t_end),
                  applies=lambda view: bool(view.dirichlet)))
