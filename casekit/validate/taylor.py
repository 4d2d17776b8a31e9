"""The time-Taylor leak: the answer at t_end from the derivatives of the solution at t0.

For a transient case every time derivative of the solution at t0 follows from what the agent sees
without solving anything: the initial data give u(t0) (and u_t(t0) for a second-order family), and
the stated PDE gives the next derivative from those, ``u_t = f - L(u)``, ``u_tt = f_t - L'(u) u_t``,
... -- derivatives of printed expressions only.  Their Taylor sum at t_end,
``sum_{n <= N} (t_end - t0)^n / n! d^n u / dt^n (t0)``, is then an answer computed without a mesh,
a boundary condition or a solve.  A manufactured solution that is a low-degree polynomial in t (the
'grow' modes ``1, r t``) is reproduced *exactly* by its first orders; slow modes over a short window
nearly so.

This check sums the expansion from the manufactured solution itself (its derivatives at t0 are the
ones the PDE gives, the stated forcing being exact) to order :data:`TAYLOR_ORDER` and asks each
partial sum to miss the hidden output at t_end by at least the span gap, as every inverter of the
battery; the build asks each to fail the accuracy gate (relative L2 above tau_acc), as it asks the
inverters (:func:`passes`): the sum is an answer an agent computes as it is, not an oracle fit, so
the span check's margin (five thresholds, for coefficients no agent can choose) does not apply.

Only where every unknown has initial data: a pressure (a Lagrange multiplier) has none, and its
gradient in ``u_t`` needs a solve.  Higher orders are the Cauchy-Kovalevskaya series of the data --
an analytic solve of the PDE by repeated differentiation, beyond what the battery calls a cheap
function of the agent view; ``benchmarks/bench_time_taylor.py`` measures how far up it reaches.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy as sp

from casekit.expr import T

#: the highest order of the expansion the check sums: one and two applications of the PDE's
#: operator to printed expressions
TAYLOR_ORDER = 2


def applies(family: Any, spec: dict[str, Any]) -> bool:
    """Whether the expansion can be read from the agent view: a transient case whose every unknown
    has initial data."""
    ic = spec.get("ic") or {}
    return bool((spec.get("pde") or {}).get("time")) and all(u.name in ic for u in family.unknowns)


def expansion(solution: Any, t0: float, t_end: float, order: int) -> Any:
    """The Taylor sum of ``solution`` (an expression of x, y, z and t, or a tuple/list/Matrix of them)
    about t0 to ``order``, evaluated at t_end: an expression of the coordinates only."""
    if isinstance(solution, sp.MatrixBase):
        return solution.applyfunc(lambda c: expansion(c, t0, t_end, order))
    if isinstance(solution, (list, tuple)):
        return type(solution)(expansion(c, t0, t_end, order) for c in solution)
    step = sp.Float(t_end - t0)
    total, derivative = sp.Integer(0), sp.sympify(solution)
    for n in range(order + 1):
        total += derivative.subs(T, t0) * step**n / math.factorial(n)
        derivative = sp.diff(derivative, T)
    return total


def residuals(solution: Any, t0: float, t_end: float, arrays_of: Any, ref: dict[str, np.ndarray],
              mask: np.ndarray, order: int = TAYLOR_ORDER) -> list[float]:
    """The relative L2 error at t_end of each partial sum (orders 0 to ``order``) against ``ref``
    inside ``mask``; ``arrays_of(expr)`` turns an expression of the coordinates into output arrays."""
    from casekit.scoring import metrics

    out = []
    for n in range(order + 1):
        arrays = arrays_of(expansion(solution, t0, t_end, n))
        finite = all(bool(np.isfinite(a[mask]).all()) for a in arrays.values())
        out.append(metrics.rel_l2(arrays, ref, mask) if finite else float("inf"))
    return out



def of_view(view: Any, ref: dict[str, np.ndarray] | None = None, mask: np.ndarray | None = None,
            order: int = TAYLOR_ORDER) -> list[float] | None:
    """:func:`residuals` of a case (a ``casekit.validate.view.CaseView`` of a source or a record)
    against ``ref`` inside ``mask`` -- by default the manufactured output at t_end on the grid, inside
    the domain; None where the check does not apply (no manufactured solution, steady, an unknown
    without initial data)."""
    from casekit.scoring.artifacts import output_names
    from casekit.validate.inversion import exact_arrays

    if view.solution is None or not view.transient or not applies(view.family, view.spec):
        return None
    names, points = output_names(view.spec), view.grid.points()
    if mask is None:
        mask = view.grid.mask(view.domain.inside)

    def arrays_of(expr: Any) -> dict[str, np.ndarray]:
        return exact_arrays(view.spec, expr, view.output.kind, names, view.t_end, points, mask, view.dim)

    solution = view.solution[view.output.of]
    if ref is None:
        ref = arrays_of(solution)  # evaluated at t_end
    return residuals(solution, view.t0, view.t_end, arrays_of, ref, mask, order)


def of_record(record: dict[str, Any]) -> list[float] | None:
    """:func:`of_view` of a built record (its manufactured solution against itself at t_end)."""
    from casekit.validate.view import view_of_record

    return of_view(view_of_record(record))


def of_reference(d: Any, spec: dict[str, Any], ref: dict[str, np.ndarray], mask: np.ndarray,
                 order: int = TAYLOR_ORDER) -> list[float] | None:
    """:func:`of_view` of a derived case (``casekit.derive.Derived``, its ``spec``) against its
    reference on the grid (the build's trial)."""
    from casekit.validate.view import CaseView

    view = CaseView(d.case_id, d.family, d.domain, spec, d.hidden_solution_text(), lambda p: p)
    return of_view(view, ref, mask, order)


def passes(orders: list[float] | None, tau_acc: float) -> tuple[int, float] | None:
    """The order (1 to :data:`TAYLOR_ORDER`) whose expansion passes the accuracy gate at ``tau_acc``
    and its error (the closest such), or None: the build's rule and its audit of built records."""
    if not orders:
        return None
    within = [(n, e) for n, e in enumerate(orders[: TAYLOR_ORDER + 1]) if n >= 1 and e <= tau_acc]
    return min(within, key=lambda c: c[1]) if within else None
