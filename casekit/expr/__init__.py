"""The one place where expression strings become math and math becomes text or code.

Every expression in casekit (forcing, boundary and initial data, coefficients, manufactured
solutions, domain parameters in constraints) is parsed by :func:`parse`, which builds a sympy
tree with its own tokenizer and parser: no ``eval``, no ``sympify`` of strings, only the
allowed symbols and a whitelist of functions.  The printers turn a tree into canonical text
(:func:`to_text`, which :func:`parse` reads back to the same tree), vectorised numpy
(:func:`to_numpy`), UFL-style Python source (:func:`to_ufl_source`), C++ (:func:`to_cpp`) and
muParser text for deal.II's ``FunctionParser`` (:func:`to_muparser`).
"""

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

__all__ = [
    "COORDS",
    "FUNCTIONS",
    "MAX_LENGTH",
    "ExpressionError",
    "T",
    "X",
    "Y",
    "Z",
    "as_expr",
    "exact",
    "param_symbol",
    "parse",
    "to_cpp",
    "to_muparser",
    "to_numpy",
    "to_text",
    "to_ufl_source",
]
