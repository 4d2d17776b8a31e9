"""Vector calculus on sympy expressions in the case's own dimension.

Scalars are sympy expressions, vectors are tuples of them; ``dim`` is 2 or 3 and only the first
``dim`` coordinates are used, so a 3-D case never gets a 2-D Laplacian.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from casekit.expr import COORDS, T

Vector = tuple[sp.Expr, ...]


def coords(dim: int) -> tuple[sp.Symbol, ...]:
    return COORDS[:dim]


def grad(u: sp.Expr, dim: int) -> Vector:
    return tuple(sp.diff(u, c) for c in coords(dim))


def div(v: Sequence[sp.Expr], dim: int) -> sp.Expr:
    return sp.Add(*[sp.diff(vi, c) for vi, c in zip(v, coords(dim), strict=True)])


def lap(u: sp.Expr, dim: int) -> sp.Expr:
    return sp.Add(*[sp.diff(u, c, 2) for c in coords(dim)])


def vlap(v: Sequence[sp.Expr], dim: int) -> Vector:
    return tuple(lap(vi, dim) for vi in v)


def dot(a: Sequence[sp.Expr], b: Sequence[sp.Expr]) -> sp.Expr:
    return sp.Add(*[ai * bi for ai, bi in zip(a, b, strict=True)])


def jacobian(v: Sequence[sp.Expr], dim: int) -> list[list[sp.Expr]]:
    """J[i][j] = d v_i / d x_j."""
    return [[sp.diff(vi, c) for c in coords(dim)] for vi in v]


def matvec(m: Sequence[Sequence[sp.Expr]], v: Sequence[sp.Expr]) -> Vector:
    return tuple(dot(row, v) for row in m)


def advect(u: Sequence[sp.Expr], v: Sequence[sp.Expr], dim: int) -> Vector:
    """(u . grad) v."""
    return matvec(jacobian(v, dim), u)


def row_div(m: Sequence[Sequence[sp.Expr]], dim: int) -> Vector:
    """Divergence of a tensor by rows: (div m)_i = sum_j d m_ij / d x_j."""
    return tuple(div(row, dim) for row in m)


def curl(a: Sequence[sp.Expr]) -> Vector:
    x, y, z = COORDS
    return (sp.diff(a[2], y) - sp.diff(a[1], z),
            sp.diff(a[0], z) - sp.diff(a[2], x),
            sp.diff(a[1], x) - sp.diff(a[0], y))


def dt(u: sp.Expr, order: int = 1) -> sp.Expr:
    return sp.diff(u, T, order)
