"""boundary_poly: a polynomial fitted to the Dirichlet data at t_end, of the lowest total degree
(up to 4 in 2-D, 3 in 3-D) that matches them to round-off, else of the highest.  Exact for
polynomial solutions the boundary determines (a higher degree than needed would admit a bubble
that vanishes on the boundary)."""

import itertools

import numpy as np

from casekit.solvers.baselines import Inverter, register


def _monomials(view, degree):  # type: ignore[no-untyped-def]
    lo = np.array(view.grid.bbox[0::2])
    width = np.array(view.grid.bbox[1::2]) - lo
    return [lambda p, e=powers: np.prod(((p - lo) / width) ** np.array(e), axis=1)
            for powers in itertools.product(range(degree + 1), repeat=view.dim) if sum(powers) <= degree]


def _values(view):  # type: ignore[no-untyped-def]
    data = np.ravel(view.boundary_values(view.t_end))
    scale = float(np.linalg.norm(data)) or 1.0
    top = 4 if view.dim == 2 else 3
    for degree in range(1, top + 1):
        fields = _monomials(view, degree)
        misfit = np.linalg.norm(np.ravel(view.fit_on_boundary(fields, view.t_end, at=view.boundary_points)) - data)
        if misfit <= 1e-9 * scale or degree == top:
            return view.fit_on_boundary(fields, view.t_end)
    raise AssertionError("unreachable")


register(Inverter("boundary_poly", "the lowest-degree polynomial that fits the Dirichlet data at t_end",
                  _values, applies=lambda view: bool(view.dirichlet)))
