"""Syntax trees (:mod:`casekit.expr.syntax`) to live UFL expressions, by walking the tree (no eval,
no sympy: this runs inside every sandboxed calibration solve)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ufl

from casekit.expr.syntax import VARIABLES, Node, fold

_FUNCS = {
    "sin": ufl.sin, "cos": ufl.cos, "tan": ufl.tan, "asin": ufl.asin, "acos": ufl.acos, "atan": ufl.atan,
    "sinh": ufl.sinh, "cosh": ufl.cosh, "tanh": ufl.tanh, "exp": ufl.exp, "log": ufl.ln, "sign": ufl.sign,
    "sqrt": ufl.sqrt, "abs": abs,
}


def _power(base: Any, exponent: Any, node: Node) -> Any:
    e = node.args[1]
    if e.op == "num" and isinstance(e.value, int):
        return base**e.value
    if e.op == "num" and e.value == 0.5:
        return ufl.sqrt(base)
    if e.op == "neg" and e.args[0].op == "num" and isinstance(e.args[0].value, int):
        return 1.0 / base ** e.args[0].value
    return base**exponent


def to_ufl(tree: Node, x: Any, t: Any = None, symbols: Mapping[str, Any] | None = None) -> Any:
    """``tree`` as UFL over the spatial coordinate ``x``, time ``t`` (a Constant) and named symbols."""
    symbols = symbols or {}

    def visit(node: Node, args: list[Any]) -> Any:
        op = node.op
        if op == "num":
            return float(node.value)  # type: ignore[arg-type]
        if op == "const":
            return ufl.pi
        if op == "var":
            name = str(node.value)
            if name == "t":
                if t is None:
                    raise ValueError("a time-dependent expression in a steady problem")
                return t
            if name in VARIABLES:
                return x[VARIABLES.index(name)]
            if name in symbols:
                return symbols[name]
            raise ValueError(f"no value for symbol {name!r}")
        if op == "neg":
            return -args[0]
        if op == "+":
            return args[0] + args[1]
        if op == "-":
            return args[0] - args[1]
        if op == "*":
            return args[0] * args[1]
        if op == "/":
            return args[0] / args[1]
        if op == "**":
            return _power(args[0], args[1], node)
        name = str(node.value)
        if name == "atan2":
            return ufl.atan2(args[0], args[1])
        if name in ("min", "max"):
            f = ufl.min_value if name == "min" else ufl.max_value
            out = args[0]
            for a in args[1:]:
                out = f(out, a)
            return out
        return _FUNCS[name](args[0])

    return fold(tree, visit)
