"""Whether a calibration's finite-element space holds a manufactured solution, before solving.

A calibration that reproduces its manufactured solution to round-off cannot set an honest
threshold, so the build lowers its degree (``CaseBuild._discretization_level``) -- after a run at
the source's degree and resolution that is thrown away: 23 of 450 PDEAgent-Bench cases on DOLFINx,
burgers_circle_v1's P2 run 300 s of its 336 s build.  A solution that is a polynomial in space of
total degree at most the calibration's (and at most linear in time: backward Euler, BDF2 and
Crank-Nicolson step it exactly) is held by the space whatever the mesh, so a probe on a mesh a few
cells across tells the same at a fraction of the cost (:data:`PROBE_CELLS`); only such solutions
are probed, every other case pays nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import sympy as sp

from casekit.expr.parser import COORDS, T

#: cells across the probe mesh
PROBE_CELLS = 8


def _components(value: Any) -> Iterable[sp.Expr]:
    if isinstance(value, sp.MatrixBase):
        return list(value)
    if isinstance(value, (tuple, list)):
        return [c for v in value for c in _components(v)]
    return [sp.sympify(value)]


def space_degree(solution: Mapping[str, Any], dim: int) -> int | None:
    """The largest total degree in space of the solution's components if every one is a
    polynomial in the coordinates and at most linear in time, else ``None``."""
    coords = COORDS[:dim]
    worst = 0
    for value in solution.values():
        for comp in _components(value):
            if comp.free_symbols - {*coords, T}:
                return None
            try:
                poly = sp.Poly(sp.expand(comp), *coords, T)
            except (sp.PolynomialError, sp.GeneratorsNeeded):
                if comp.free_symbols:
                    return None
                continue  # a constant
            if poly.degree(T) > 1:
                return None
            worst = max(worst, max((sum(m[:dim]) for m in poly.monoms()), default=0))
    return worst


def may_hold(solution: Mapping[str, Any] | None, dim: int, degree: int, lowest: int = 1) -> bool:
    """Whether the degree-``degree`` space may hold ``solution`` exactly (worth a probe), for a
    calibration that can go down to degree ``lowest`` (the family's)."""
    if solution is None or degree <= lowest:
        return False
    d = space_degree(solution, dim)
    return d is not None and d <= degree
