"""Printers from sympy trees to text and code.

:func:`to_text` is the canonical form stored in case records: deterministic, and
``parse(to_text(e)) == e``.  The code printers share one table of function names per target.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp
from sympy.printing.cxx import CXX11CodePrinter
from sympy.printing.str import StrPrinter

from casekit.expr import numeric
from casekit.expr.parser import COORDS, T


class _TextPrinter(StrPrinter):
    """Canonical casekit text: the dialect :func:`casekit.expr.parse` reads."""

    _default_settings = {**StrPrinter._default_settings, "order": None}
    functions: dict[str, str] = {"Abs": "abs", "Min": "min", "Max": "max"}
    prefix = ""

    def _print_Float(self, expr: sp.Float) -> str:
        return repr(float(expr))

    def _print_Exp1(self, expr: Any) -> str:
        return f"{self.prefix}exp(1)"

    def _print_Pi(self, expr: Any) -> str:
        return f"{self.prefix}pi"

    def _print_Function(self, expr: sp.Function) -> str:
        name = type(expr).__name__
        name = self.functions.get(name, name)
        args = ", ".join(self._print(a) for a in expr.args)
        return f"{self.prefix}{name}({args})"

    _print_Abs = _print_Function
    _print_Min = _print_Function
    _print_Max = _print_Function

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        return expr.name


def to_text(expr: sp.Expr) -> str:
    return _TextPrinter().doprint(sp.sympify(expr))


class _UflPrinter(_TextPrinter):
    """UFL-style Python source: ``ufl.sin(ufl.pi*x[0])`` over a coordinate ``x`` and time ``t``."""

    functions = {"Abs": "abs", "Min": "min_value", "Max": "max_value"}
    prefix = "ufl."

    def __init__(self, coord: str, time: str) -> None:
        super().__init__()
        self.coord = coord
        self.time = time

    def _print_Abs(self, expr: sp.Abs) -> str:
        return f"abs({self._print(expr.args[0])})"

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        if expr.exp == sp.S.Half:
            return f"ufl.sqrt({self._print(expr.base)})"
        if expr.exp == -sp.S.Half:
            return f"1/ufl.sqrt({self._print(expr.base)})"
        return super()._print_Pow(expr, rational)

    def _print_Min(self, expr: sp.Min) -> str:
        return self._fold("min_value", expr.args)

    def _print_Max(self, expr: sp.Max) -> str:
        return self._fold("max_value", expr.args)

    def _fold(self, name: str, args: Sequence[sp.Expr]) -> str:
        out = self._print(args[0])
        for a in args[1:]:
            out = f"ufl.{name}({out}, {self._print(a)})"
        return out

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        if expr in COORDS:
            return f"{self.coord}[{COORDS.index(expr)}]"
        if expr == T:
            return self.time
        return expr.name

    def _print_Float(self, expr: sp.Float) -> str:
        return repr(float(expr))


def to_ufl_source(expr: sp.Expr, *, coord: str = "x", time: str = "t") -> str:
    return _UflPrinter(coord, time).doprint(sp.sympify(expr))


class _CppPrinter(CXX11CodePrinter):
    def __init__(self, coord: str, time: str) -> None:
        super().__init__({"strict": False})
        self.coord = coord
        self.time = time

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        if expr in COORDS:
            return f"{self.coord}[{COORDS.index(expr)}]"
        if expr == T:
            return self.time
        return super()._print_Symbol(expr)

    def _print_Float(self, expr: sp.Float) -> str:
        return repr(float(expr))

    def _print_sign(self, expr: sp.sign) -> str:
        a = self._print(expr.args[0])
        return f"((({a}) > 0) - (({a}) < 0))"


def to_cpp(expr: sp.Expr, *, coord: str = "p", time: str = "t") -> str:
    """C++11 source over ``p[0..2]`` (a deal.II ``Point``) and ``t``."""
    return _CppPrinter(coord, time).doprint(sp.sympify(expr))


class _MuParserPrinter(_TextPrinter):
    """Text for deal.II's ``FunctionParser`` (muParser): ``^`` powers, ``ln`` for log."""

    functions = {"Abs": "abs", "Min": "min", "Max": "max", "log": "ln"}

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        base, exp = expr.args
        if exp == sp.Rational(1, 2):
            return f"sqrt({self._print(base)})"
        if exp == -1:
            return f"1/({self._print(base)})"
        return f"({self._print(base)})^({self._print(exp)})"

    def _print_Rational(self, expr: sp.Rational) -> str:
        return f"({expr.p}/{expr.q})"

    def _print_Exp1(self, expr: Any) -> str:
        return "exp(1)"


def to_muparser(expr: sp.Expr) -> str:
    """muParser text over ``x, y, z, t`` with the constant ``pi`` defined by the caller."""
    return _MuParserPrinter().doprint(sp.sympify(expr))


#: expressions of more tree nodes than this are compiled with common-subexpression elimination
CSE_NODES = 60


@lru_cache(maxsize=8192)
def _compiled(expr: sp.Expr, dim: int, params: tuple[str, ...]) -> Callable[..., Any]:
    """``f(x, y[, z], t, *params)`` for ``expr`` (memoised: validation and hygiene evaluate the
    same terms of the same expressions many times).  A tree of the whitelisted heads is walked
    (:mod:`casekit.expr.numeric`: no compile); anything else goes through ``lambdify``."""
    names = [s.name for s in COORDS[:dim]] + [T.name, *params]
    free = {s.name for s in expr.free_symbols} - set(names)
    if free:
        raise ValueError(f"expression uses {', '.join(sorted(free))}, which a {dim}-D evaluation does not provide")
    if numeric.supported(expr):
        return lambda *values: numeric.evaluate(expr, dict(zip(names, values, strict=True)))
    # common-subexpression elimination pays on large trees evaluated on many points; on a small
    # term it only quadruples the compile time
    large = sum(1 for _ in sp.preorder_traversal(expr)) > CSE_NODES
    args = [*COORDS[:dim], T, *(sp.Symbol(p, real=True) for p in params)]
    return sp.lambdify(args, expr, modules="numpy", cse=large)


def to_numpy(expr: sp.Expr, dim: int, *, params: Sequence[str] = ()) -> Callable[..., np.ndarray]:
    """A vectorised function ``f(points, t=0.0, **params)`` for ``points`` of shape (N, dim).

    Constant expressions are broadcast to shape (N,).
    """
    fn = _compiled(sp.sympify(expr), dim, tuple(params))

    def evaluate(points: np.ndarray, t: float = 0.0, **values: float) -> np.ndarray:
        pts = np.asarray(points, dtype=float)
        coords = [pts[:, i] for i in range(dim)]
        out = fn(*coords, t, *(values[p] for p in params))
        return np.broadcast_to(np.asarray(out, dtype=float), (pts.shape[0],)).copy()

    return evaluate
