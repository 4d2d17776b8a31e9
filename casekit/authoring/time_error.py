"""The time-discretisation error a calibration makes on a drawn transient solution.

A manufactured transient solution is a sum of modes ``M_k(x) phi_k(t)``
(``casekit.authoring.catalogue.time_modes``).  The calibration steps it with its scheme at the
case's step ``dt`` (``calibration.scheme``: backward Euler, first order; Crank-Nicolson and BDF2,
second order; a wave's Newmark average acceleration, second order), and its error at t_end enters
e_base beside the spatial error.  This module estimates that time error before anything is solved,
from the time functions alone: each mode's scalar model problem

    y' = -mu y + g(t)        (first order in time)      y'' = -mu y + g(t)        (second order)

with ``g`` chosen so that ``phi_k`` is its exact solution, stepped with the scheme, for ``mu = 0``
(the forcing carries the whole mode: a quadrature of its derivative, the worst case of a mode
that the spatial operator does not damp) and ``mu`` the mode's own rate (an eigenmode that decays
or oscillates freely).  The estimate is the sum of the modes' errors at t_end over the largest
mode there (each time function scaled to a largest magnitude of 1 over the window: the shapes are
of comparable size), the larger of the two models.

For small ``a = rate x (t_end - t0)`` over ``n`` steps this is the textbook error: ``a^2 / (2 n)``
for backward Euler, ``a^3 / (12 n^2)`` for Crank-Nicolson; a record's rates, stretched to its
window (``casekit.authoring.sibling.recipe``), can make the first of them several per cent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import sympy as sp

from casekit.expr import COORDS, T, parse

#: calibration time schemes of first-order problems -> their order
FIRST_ORDER_SCHEMES = {"backward_euler": 1, "crank_nicolson": 2, "bdf2": 2}
#: the scheme of problems second order in time (casekit's calibration solvers use one, whatever
#: ``calibration.scheme`` says)
SECOND_ORDER_SCHEME = "newmark"


def time_functions(solution: Mapping[str, Any]) -> list[sp.Expr]:
    """The distinct time functions of a manufactured solution (every component): each additive
    term's factor that does not depend on the coordinates, numbers dropped."""
    coords = set(COORDS)
    out: list[sp.Expr] = []
    for value in solution.values():
        for text in value if isinstance(value, list) else [value]:
            for term in sp.Add.make_args(sp.expand(parse(str(text)), deep=False, mul=True, power_base=False,
                                                   power_exp=False, log=False, multinomial=False)):
                timed, _ = term.as_independent(*coords, as_Add=False)
                _, func = timed.as_independent(T, as_Add=False)
                if func.free_symbols & {T} and not any(sp.simplify(func - f) == 0 for f in out):
                    out.append(func)
                elif not func.free_symbols and not any(f == sp.Integer(1) for f in out):
                    out.append(sp.Integer(1))
    return out


def relative_error(modes: Iterable[sp.Expr], t0: float, t_end: float, dt: float, scheme: str,
                   time_order: int = 1) -> float:
    """The estimated relative time error at ``t_end`` of a solution with these time functions,
    stepped with ``scheme`` at ``dt`` (the calibration's: ``SolveSettings.steps`` rounds the
    window to whole steps); ``time_order`` 2 steps with Newmark's average acceleration."""
    if time_order == 1 and scheme not in FIRST_ORDER_SCHEMES:
        raise ValueError(f"unknown time scheme {scheme!r} (valid: {', '.join(FIRST_ORDER_SCHEMES)})")
    n = max(1, round((t_end - t0) / dt))
    h = (t_end - t0) / n
    grid = np.linspace(t0, t_end, 201)
    errors, finals = [], []
    for phi in modes:
        f = [sp.lambdify(T, sp.diff(phi, T, k), "numpy") for k in range(3)]
        values = [np.broadcast_to(np.asarray(fk(grid), dtype=float), grid.shape) for fk in f]
        scale = float(np.max(np.abs(values[0]))) or 1.0
        rate = float(np.max(np.abs(values[time_order]))) / max(float(np.max(np.abs(values[0]))), 1e-300)
        rate = rate ** (1.0 / time_order)
        exact = float(f[0](t_end))
        worst = 0.0
        for mu in (0.0, rate**time_order):
            y = _step(f, t0, h, n, mu, scheme, time_order)
            worst = max(worst, abs(y - exact))
        errors.append(worst / scale)
        finals.append(abs(exact) / scale)
    if not errors:
        return 0.0
    return float(sum(errors) / max(max(finals), 1e-300))


def _step(f: list[Callable[[float], Any]], t0: float, h: float, n: int, mu: float, scheme: str,
          time_order: int) -> float:
    phi = lambda t: float(f[0](t))  # noqa: E731
    if time_order == 2:  # y'' = -mu y + g, Newmark average acceleration
        g = lambda t: float(f[2](t)) + mu * phi(t)  # noqa: E731
        y, v = phi(t0), float(f[1](t0))
        for k in range(n):
            ta, tb = t0 + k * h, t0 + (k + 1) * h
            y1 = (y + h * v - h * h / 4 * mu * y + h * h / 4 * (g(ta) + g(tb))) / (1 + h * h / 4 * mu)
            v = 2 * (y1 - y) / h - v
            y = y1
        return y
    g = lambda t: float(f[1](t)) + mu * phi(t)  # noqa: E731
    y_prev, y = math.nan, phi(t0)
    for k in range(n):
        ta, tb = t0 + k * h, t0 + (k + 1) * h
        kind = "crank_nicolson" if scheme == "bdf2" and k == 0 else scheme
        if kind == "backward_euler":
            y1 = (y + h * g(tb)) / (1 + mu * h)
        elif kind == "crank_nicolson":
            y1 = ((1 - mu * h / 2) * y + h / 2 * (g(ta) + g(tb))) / (1 + mu * h / 2)
        else:
            y1 = (2 * y - 0.5 * y_prev + h * g(tb)) / (1.5 + mu * h)
        y_prev, y = y, y1
    return y
