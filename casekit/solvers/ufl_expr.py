"""sympy trees (from casekit.expr) to live UFL expressions, by walking the tree (no eval)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import sympy as sp
import ufl

from casekit.expr import COORDS, T

_FUNCS = {
    sp.sin: ufl.sin, sp.cos: ufl.cos, sp.tan: ufl.tan, sp.asin: ufl.asin, sp.acos: ufl.acos,
    sp.atan: ufl.atan, sp.sinh: ufl.sinh, sp.cosh: ufl.cosh, sp.tanh: ufl.tanh, sp.exp: ufl.exp,
    sp.log: ufl.ln, sp.sign: ufl.sign,
}


def to_ufl(expr: Any, x: Any, t: Any = None, symbols: Mapping[str, Any] | None = None) -> Any:
    """``expr`` as UFL over the spatial coordinate ``x``, time ``t`` (a Constant) and named symbols."""
    symbols = symbols or {}

    def walk(e: sp.Basic) -> Any:
        if e.is_Number:
            return float(e)
        if e is sp.pi:
            return ufl.pi
        if e is sp.E:
            return math.e
        if isinstance(e, sp.Symbol):
            if e in COORDS:
                return x[COORDS.index(e)]
            if e == T:
                if t is None:
                    raise ValueError("a time-dependent expression in a steady problem")
                return t
            if e.name in symbols:
                return symbols[e.name]
            raise ValueError(f"no value for symbol {e.name!r}")
        if isinstance(e, sp.Add):
            out = walk(e.args[0])
            for a in e.args[1:]:
                out = out + walk(a)
            return out
        if isinstance(e, sp.Mul):
            out = walk(e.args[0])
            for a in e.args[1:]:
                out = out * walk(a)
            return out
        if isinstance(e, sp.Pow):
            base, exp = e.args
            if exp == sp.S.Half:
                return ufl.sqrt(walk(base))
            if exp.is_Integer:
                n = int(exp)
                b = walk(base)
                return b**n if n >= 0 else 1.0 / b ** (-n)
            return walk(base) ** walk(exp)
        if isinstance(e, sp.Abs):
            return abs(walk(e.args[0]))
        if isinstance(e, sp.atan2):
            return ufl.atan2(walk(e.args[0]), walk(e.args[1]))
        if isinstance(e, (sp.Min, sp.Max)):
            f = ufl.min_value if isinstance(e, sp.Min) else ufl.max_value
            out = walk(e.args[0])
            for a in e.args[1:]:
                out = f(out, walk(a))
            return out
        func = _FUNCS.get(type(e))
        if func is not None:
            return func(walk(e.args[0]))
        raise ValueError(f"cannot express {type(e).__name__} in UFL")

    return walk(sp.sympify(expr))
