"""Expression text to sympy trees: the syntax tree of :mod:`casekit.expr.syntax`, built in sympy
with the checks that need its algebra (undefined or complex values, sizes of powers, exponent
towers).  Derivation and validation work on these trees; solvers use the syntax tree itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

import sympy as sp

from casekit.expr.syntax import (
    ARITIES,
    MAX_ARGS,
    MAX_DEPTH,
    MAX_FLOAT_MAGNITUDE,
    MAX_INT_DIGITS,
    MAX_LENGTH,
    MAX_NODES,
    ExpressionError,
    Node,
    as_tree,
    fold,
    parse_tree,
)

__all__ = ["COORDS", "FUNCTIONS", "MAX_ARGS", "MAX_DEPTH", "MAX_FLOAT_MAGNITUDE", "MAX_INT_DIGITS", "MAX_LENGTH",
           "MAX_NODES", "ExpressionError", "T", "X", "Y", "Z", "as_expr", "exact", "param_symbol", "parse"]

X, Y, Z, T = sp.symbols("x y z t", real=True)
COORDS = (X, Y, Z)
_BASE_SYMBOLS = {"x": X, "y": Y, "z": Z, "t": T}

MAX_POWER_DIGITS = 300  # refuse integer powers whose value would need more digits
#: bounds on integer powers of non-constant bases and nested non-constant exponents ("towers")
MAX_SYMBOLIC_POWER = 32
MAX_TOWER = 2


def _min(*args: sp.Expr) -> sp.Expr:
    return sp.Min(*args)


def _max(*args: sp.Expr) -> sp.Expr:
    return sp.Max(*args)


_SYMPY: dict[str, Callable[..., sp.Expr]] = {
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos, "atan": sp.atan,
    "atan2": sp.atan2, "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh, "exp": sp.exp, "log": sp.log,
    "sqrt": sp.sqrt, "abs": sp.Abs, "sign": sp.sign, "min": _min, "max": _max,
}
# name -> (sympy constructor, allowed argument counts; None = two or more)
FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], tuple[int, ...] | None]] = {
    name: (_SYMPY[name], arities) for name, arities in ARITIES.items()}
CONSTANTS = {"pi": sp.pi}


def _to_sympy(root: Node, names: dict[str, sp.Symbol]) -> sp.Expr:
    """The sympy tree of a syntax tree, every operation checked as it is built."""

    def visit(node: Node, args: list[sp.Expr]) -> sp.Expr:
        op, col = node.op, node.col
        if op == "num":
            return sp.Integer(node.value) if isinstance(node.value, int) else sp.Float(node.value)
        if op == "var":
            return names[str(node.value)]
        if op == "const":
            return CONSTANTS[str(node.value)]
        if op == "neg":
            return _combine(col, lambda: -args[0])
        if op in ("+", "-"):
            return _combine(col, _add(args[0], args[1], op))
        if op in ("*", "/"):
            return _combine(col, _mul(args[0], args[1], op))
        if op == "**":
            _check_power(args[0], args[1], col)
            return _combine(col, lambda: sp.Pow(args[0], args[1]))
        func = FUNCTIONS[str(node.value)][0]
        return _combine(col, lambda: func(*args))

    return fold(root, visit)


def _add(a: sp.Expr, b: sp.Expr, op: str) -> Callable[[], sp.Expr]:
    return lambda: a + b if op == "+" else a - b


def _mul(a: sp.Expr, b: sp.Expr, op: str) -> Callable[[], sp.Expr]:
    return lambda: a * b if op == "*" else a / b


def _check_power(base: sp.Expr, exponent: sp.Expr, col: int) -> None:
    if base.is_Number and exponent.is_Number:
        b = abs(float(base))
        e = float(exponent)
        if b not in (0.0, 1.0) and abs(math.log10(b) * e) > MAX_POWER_DIGITS:
            raise ExpressionError(f"power at column {col} gives a number that is too large")
    elif exponent.is_Number:
        if abs(float(exponent)) > MAX_SYMBOLIC_POWER:
            raise ExpressionError(f"power at column {col}: exponents of non-constant bases are limited to "
                                  f"{MAX_SYMBOLIC_POWER} in magnitude")
    elif _tower(exponent) + 1 > MAX_TOWER:
        raise ExpressionError(f"power at column {col}: exponents nest more than {MAX_TOWER} levels deep")


def _tower(e: sp.Expr) -> int:
    """How deeply non-constant exponents nest in ``e`` (exp counts as a power)."""
    if not isinstance(e, sp.Basic) or e.is_Number or e.is_Symbol:
        return 0
    inner = max((_tower(a) for a in e.args), default=0)
    if isinstance(e, sp.exp) or (isinstance(e, sp.Pow) and not e.exp.is_Number):
        return inner + 1
    return inner


def _combine(col: int, build: Callable[[], sp.Expr]) -> sp.Expr:
    try:
        value = build()
    except (ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError,
            AttributeError) as exc:
        raise ExpressionError(f"cannot evaluate near column {col}: {exc}") from None
    if value.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise ExpressionError(f"undefined value (division by zero or similar) near column {col}")
    if isinstance(value, sp.exp) and _tower(value) > MAX_TOWER:
        raise ExpressionError(f"exp at column {col}: exponents nest more than {MAX_TOWER} levels deep")
    if value.has(sp.I):
        raise ExpressionError(f"complex value near column {col}")
    if value.is_Number and not math.isfinite(float(value)):
        raise ExpressionError(f"number too large near column {col}")
    return value


def param_symbol(name: str) -> sp.Symbol:
    """The symbol of a named (real) parameter, shared by every parse."""
    return sp.Symbol(name, real=True)


def parse(
    text: str,
    *,
    variables: Sequence[str] = ("x", "y", "z", "t"),
    params: Iterable[str] = (),
) -> sp.Expr:
    """Parse ``text`` over the given coordinate/time variables and named parameters.

    Raises :class:`ExpressionError` naming the offending token for anything else.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"an expression must be a string or a number, not {type(text).__name__}")
    return _parse(text, tuple(variables), tuple(params))


@lru_cache(maxsize=4096)
def _parse(text: str, variables: tuple[str, ...], params: tuple[str, ...]) -> sp.Expr:
    """:func:`parse`, memoised (trees are immutable; derivation and validation read the same
    texts many times, and building a tree node by node costs milliseconds)."""
    tree = parse_tree(text, variables, params)
    names = {**{v: _BASE_SYMBOLS[v] for v in variables}, **{p: param_symbol(p) for p in params}}
    return _to_sympy(tree, names)


def as_expr(
    value: object,
    *,
    variables: Sequence[str] = ("x", "y", "z", "t"),
    params: Iterable[str] = (),
) -> sp.Expr:
    """A JSON value (number or expression string) as a sympy expression."""
    if isinstance(value, str):
        return parse(value, variables=variables, params=params)
    return _to_sympy(as_tree(value), {})


def exact(e: sp.Expr) -> sp.Expr:
    """``e`` with every float replaced by the exact decimal rational it was written as
    (0.1 -> 1/10), so derived data and residual checks are exact."""
    floats = e.atoms(sp.Float) if isinstance(e, sp.Basic) else set()
    if not floats:
        return e
    return e.xreplace({f: sp.Rational(repr(float(f))) for f in floats})
