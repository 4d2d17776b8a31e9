"""Vectorised numpy evaluation of syntax trees (:mod:`casekit.expr.syntax`), without sympy.

What a calibration solver needs of an expression -- its values at interpolation or grid points
-- computed from the tree as written: no simplification, no compile, no sympy import in the
sandboxed run.  Derivation and validation evaluate sympy trees instead (:mod:`numeric`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from casekit.expr.syntax import VARIABLES, Node, as_tree, fold


def _min(*a: np.ndarray) -> np.ndarray:
    return np.minimum.reduce(np.broadcast_arrays(*a))


def _max(*a: np.ndarray) -> np.ndarray:
    return np.maximum.reduce(np.broadcast_arrays(*a))


#: the grammar's functions in numpy
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "abs": np.abs, "sign": np.sign, "min": _min, "max": _max,
}
CONSTANTS = {"pi": math.pi}


def _power(base: Any, exponent: Any, node: Node) -> Any:
    e = node.args[1]
    if e.op == "num" and isinstance(e.value, int):  # repeated products, as sympy's printers do
        n = int(e.value)
        return 1.0 / base ** (-n) if n < 0 else base**n
    return np.power(base, exponent)


def evaluate(root: Node, env: Mapping[str, Any]) -> Any:
    """``root`` with each variable or parameter taking its value in ``env`` (arrays broadcast)."""

    def visit(node: Node, args: list[Any]) -> Any:
        op = node.op
        if op == "num":
            return np.float64(node.value)
        if op == "var":
            return env[str(node.value)]
        if op == "const":
            return np.float64(CONSTANTS[str(node.value)])
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
        return FUNCTIONS[str(node.value)](*args)

    with np.errstate(all="ignore"):
        return fold(root, visit)


def points_function(value: Any, dim: int, *, params: Sequence[str] = ()) -> Callable[..., np.ndarray]:
    """A case_spec value (number or expression text, or a tree) as ``f(points, t=0.0, **params)``
    for ``points`` of shape (N, dim): values of shape (N,) (constants broadcast)."""
    tree = value if isinstance(value, Node) else as_tree(value, variables=(*VARIABLES[:dim], "t"),
                                                            params=tuple(params))
    unknown = tree.names() - {*VARIABLES[:dim], "t", *params}
    if unknown:
        raise ValueError(f"expression uses {', '.join(sorted(unknown))}, which a {dim}-D evaluation does not provide")

    def f(points: np.ndarray, t: float = 0.0, **values: float) -> np.ndarray:
        pts = np.asarray(points, dtype=float)
        env: dict[str, Any] = {name: pts[:, i] for i, name in enumerate(VARIABLES[:dim])}
        env.update(t=t, **{p: values[p] for p in params})
        out = evaluate(tree, env)
        return np.broadcast_to(np.asarray(out, dtype=float), (pts.shape[0],)).copy()

    return f
