"""The one place where expression strings become math and math becomes text or code.

Every expression in casekit (forcing, boundary and initial data, coefficients, manufactured
solutions, domain parameters in constraints) is read by one tokenizer and grammar
(:mod:`casekit.expr.syntax`: no ``eval``, no ``sympify`` of strings, only the allowed symbols
and a whitelist of functions) into a syntax tree.  Solvers evaluate that tree directly
(:mod:`casekit.expr.tree`, numpy; :mod:`casekit.solvers.ufl_expr`, UFL) without importing
sympy; derivation and validation get a sympy tree from :func:`parse`.  The printers turn a
sympy tree into canonical text (:func:`to_text`, which :func:`parse` reads back to the same
tree), vectorised numpy (:func:`to_numpy`), UFL-style Python source (:func:`to_ufl_source`),
C++ (:func:`to_cpp`) and muParser text for deal.II's ``FunctionParser`` (:func:`to_muparser`).

The names below are loaded on first use, so that ``casekit.expr.syntax`` and
``casekit.expr.tree`` can be imported without sympy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from casekit.expr.parser import (
        COORDS,
        FUNCTIONS,
        MAX_LENGTH,
        ExpressionError,
        T,
        X,
        Y,
        Z,
        as_expr,
        exact,
        param_symbol,
        parse,
    )
    from casekit.expr.printers import to_cpp, to_muparser, to_numpy, to_text, to_ufl_source

_WHERE = {
    **dict.fromkeys(("COORDS", "FUNCTIONS", "MAX_LENGTH", "T", "X", "Y", "Z", "as_expr", "exact", "param_symbol",
                     "parse"), "casekit.expr.parser"),
    "ExpressionError": "casekit.expr.syntax",
    **dict.fromkeys(("to_cpp", "to_muparser", "to_numpy", "to_text", "to_ufl_source"), "casekit.expr.printers"),
}

__all__ = ["COORDS", "FUNCTIONS", "MAX_LENGTH", "ExpressionError", "T", "X", "Y", "Z", "as_expr", "exact",
           "param_symbol", "parse", "to_cpp", "to_muparser", "to_numpy", "to_text", "to_ufl_source"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'casekit.expr' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
