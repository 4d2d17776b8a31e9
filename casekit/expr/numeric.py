"""Vectorised numpy evaluation of a sympy tree by walking it, without compiling code.

``sympy.lambdify`` prints, compiles and executes a module per expression (1-10 ms each).
Validation and hygiene evaluate thousands of small distinct terms on a few hundred points, so
the compile dominates; walking the tree costs microseconds per node.  Structurally equal
subtrees hash equal in sympy, so one memo per evaluation gives common-subexpression
elimination for free.  :func:`walker` returns ``None`` for a tree with a head it does not know
(the caller then compiles it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import sympy as sp


def _min(*a: np.ndarray) -> np.ndarray:
    return np.minimum.reduce(np.broadcast_arrays(*a))


def _max(*a: np.ndarray) -> np.ndarray:
    return np.maximum.reduce(np.broadcast_arrays(*a))


#: sympy function heads and their numpy counterparts (the parser's whitelist and what
#: differentiation makes of it)
FUNCTIONS: dict[Any, Callable[..., np.ndarray]] = {
    sp.sin: np.sin, sp.cos: np.cos, sp.tan: np.tan, sp.asin: np.arcsin, sp.acos: np.arccos,
    sp.atan: np.arctan, sp.atan2: np.arctan2, sp.sinh: np.sinh, sp.cosh: np.cosh, sp.tanh: np.tanh,
    sp.exp: np.exp, sp.log: np.log, sp.Abs: np.abs, sp.sign: np.sign,
    sp.sec: lambda a: 1 / np.cos(a), sp.csc: lambda a: 1 / np.sin(a), sp.cot: lambda a: 1 / np.tan(a),
    sp.Min: _min, sp.Max: _max,
}


def supported(expr: sp.Basic) -> bool:
    """Whether :func:`evaluate` knows every node of ``expr``."""
    for node in sp.preorder_traversal(expr):
        if node.is_Symbol or node.is_Number or node.is_NumberSymbol or node.is_Add or node.is_Mul or node.is_Pow:
            continue
        if node.func not in FUNCTIONS:
            return False
    return True


def evaluate(expr: sp.Basic, env: Mapping[str, Any]) -> Any:
    """``expr`` with each symbol (by name) taking its value in ``env`` (arrays broadcast)."""
    memo: dict[sp.Basic, Any] = {}

    def walk(e: sp.Basic) -> Any:
        hit = memo.get(e)
        if hit is not None:
            return hit
        if e.is_Symbol:
            out = env[e.name]
        elif e.is_Number or e.is_NumberSymbol:
            out = np.float64(e)
        elif e.is_Add:
            out = walk(e.args[0])
            for a in e.args[1:]:
                out = out + walk(a)
        elif e.is_Mul:
            out = walk(e.args[0])
            for a in e.args[1:]:
                out = out * walk(a)
        elif e.is_Pow:
            base, exp = e.args
            b = walk(base)
            if exp == sp.S.Half:
                out = np.sqrt(b)
            elif exp.is_Integer:
                out = 1.0 / b ** (-int(exp)) if exp < 0 else b ** int(exp)
            else:
                out = np.power(b, walk(exp))
        else:
            out = FUNCTIONS[e.func](*(walk(a) for a in e.args))
        memo[e] = out
        return out

    with np.errstate(all="ignore"):
        return walk(expr)
