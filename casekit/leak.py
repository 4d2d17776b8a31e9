"""How far an agent-visible expression is from the hidden solution.

An expression *leaks* when evaluating it on the interior evaluation-grid points (at the output
time) reproduces the solution: symbolically (it simplifies to the solution) or numerically
(relative L2 gap below :data:`GAP_MIN`).  Values are compared through the case's output field
(a magnitude is compared as a magnitude), since that is what the evaluator scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from casekit.expr import to_numpy

#: default smallest acceptable relative L2 gap between a visible expression and the solution
GAP_MIN = 0.1
#: a gap this small means "numerically identical" (then checked symbolically)
IDENTICAL_GAP = 1e-9


def evaluate(value: Any, points: np.ndarray, t: float, dim: int) -> np.ndarray:
    """A scalar expression -> (N,), a tuple of components -> (N, k)."""
    if isinstance(value, (tuple, list)):
        return np.column_stack([to_numpy(sp.sympify(v), dim)(points, t) for v in value])
    return to_numpy(sp.sympify(value), dim)(points, t)


def output_values(values: np.ndarray, kind: str) -> np.ndarray:
    """Apply an output transform (scalar, magnitude, components) to evaluated values."""
    if kind == "magnitude":
        return np.linalg.norm(np.atleast_2d(values.T).T, axis=1) if values.ndim == 2 else np.abs(values)
    return values


def relative_gap(a: np.ndarray, b: np.ndarray) -> float:
    """||a - b|| / ||b|| over all points and components (absolute when ||b|| ~ 0)."""
    diff = float(np.linalg.norm(np.ravel(a) - np.ravel(b)))
    ref = float(np.linalg.norm(np.ravel(b)))
    return diff / ref if ref > 1e-14 else diff


def gaps(visible: Any, solution: Any, kind: str, points: np.ndarray, t: float, dim: int) -> list[float]:
    """Gaps between a visible value and the solution unknown it could stand for.

    Same shape: one gap through the output transform.  A scalar against a vector solution: the
    gaps to each component and to the magnitude.
    """
    v = evaluate(visible, points, t, dim)
    s = evaluate(solution, points, t, dim)
    if v.ndim == s.ndim:
        if v.ndim == 2 and v.shape[1] != s.shape[1]:
            return [float("inf")]
        return [relative_gap(output_values(v, kind), output_values(s, kind))]
    if v.ndim == 1 and s.ndim == 2:
        return [relative_gap(v, s[:, i]) for i in range(s.shape[1])] + [
            relative_gap(v, np.linalg.norm(s, axis=1))]
    return [relative_gap(np.linalg.norm(v, axis=1), s)]


def symbolically_equal(visible: Any, solution: Any) -> bool:
    """Whether the visible value simplifies to the solution (component-wise)."""
    vs = visible if isinstance(visible, (tuple, list)) else (visible,)
    ss = solution if isinstance(solution, (tuple, list)) else (solution,)
    if len(vs) != len(ss):
        return False
    return all(_zero(sp.sympify(a) - sp.sympify(b)) for a, b in zip(vs, ss, strict=True))


def _zero(e: sp.Expr) -> bool:
    if e == 0:
        return True
    e = sp.nsimplify(e, rational=True) if e.has(sp.Float) else e
    return bool(sp.simplify(e) == 0)


def min_gap(values: Sequence[float]) -> float:
    return min(values) if values else float("inf")
