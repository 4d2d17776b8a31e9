"""Tokenizer and recursive-descent parser from expression text to sympy trees.

Grammar (``**`` binds tighter than unary minus, and is right-associative)::

    expr  := term (("+" | "-") term)*
    term  := ("+" | "-") term | unary (("*" | "/") unary)*
    unary := ("+" | "-") unary | power

A leading sign applies to the whole product after it (``-a*b`` is ``-(a*b)``), which is how
sympy prints, so printed expressions read back to the same tree.
    power := atom ("**" unary)?
    atom  := NUMBER | NAME | NAME "(" expr ("," expr)* ")" | "(" expr ")"
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from casekit.errors import CasekitError

X, Y, Z, T = sp.symbols("x y z t", real=True)
COORDS = (X, Y, Z)
_BASE_SYMBOLS = {"x": X, "y": Y, "z": Z, "t": T}

MAX_LENGTH = 20_000
MAX_DEPTH = 60
MAX_POWER_DIGITS = 300  # refuse integer powers whose value would need more digits
#: bounds that keep derivation (derivatives, residual and leak checks) within seconds and bounded
#: memory for any accepted expression: literal sizes, arguments of min/max, integer powers of
#: non-constant bases, nested non-constant exponents ("towers") and the size of the tree
MAX_INT_DIGITS = 30
MAX_FLOAT_MAGNITUDE = 1e100
MAX_ARGS = 8
MAX_SYMBOLIC_POWER = 32
MAX_TOWER = 2
MAX_NODES = 4000


def _min(*args: sp.Expr) -> sp.Expr:
    return sp.Min(*args)


def _max(*args: sp.Expr) -> sp.Expr:
    return sp.Max(*args)


# name -> (sympy constructor, allowed argument counts; None = two or more)
FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], tuple[int, ...] | None]] = {
    "sin": (sp.sin, (1,)),
    "cos": (sp.cos, (1,)),
    "tan": (sp.tan, (1,)),
    "asin": (sp.asin, (1,)),
    "acos": (sp.acos, (1,)),
    "atan": (sp.atan, (1,)),
    "atan2": (sp.atan2, (2,)),
    "sinh": (sp.sinh, (1,)),
    "cosh": (sp.cosh, (1,)),
    "tanh": (sp.tanh, (1,)),
    "exp": (sp.exp, (1,)),
    "log": (sp.log, (1,)),
    "sqrt": (sp.sqrt, (1,)),
    "abs": (sp.Abs, (1,)),
    "sign": (sp.sign, (1,)),
    "min": (_min, None),
    "max": (_max, None),
}
CONSTANTS = {"pi": sp.pi}


class ExpressionError(CasekitError):
    """An expression string that is not accepted, with the offending token and column."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "num", "name", "op", "end"
    text: str
    col: int  # 1-based column


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\n\r]+)
  | (?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\*\*|[-+*/(),])
    """,
    re.VERBOSE | re.ASCII,
)

_HINTS = {
    "^": "use ** for powers",
    ".": "attribute access is not allowed",
    "[": "indexing is not allowed",
    "]": "indexing is not allowed",
    "=": "assignments and comparisons are not allowed",
    "<": "comparisons are not allowed",
    ">": "comparisons are not allowed",
    ";": "one expression only",
    ":": "lambdas and slices are not allowed",
    "'": "strings are not allowed",
    '"': "strings are not allowed",
    "@": "decorators and matrix products are not allowed",
    "%": "the modulo operator is not allowed",
}


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    for i, ch in enumerate(text):
        if not ch.isascii():
            raise ExpressionError(f"non-ASCII character {ch!r} (U+{ord(ch):04X}) at column {i + 1}: digits, names "
                                  "and operators must be ASCII")
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None or m.end() == pos:
            ch = text[pos]
            hint = _HINTS.get(ch, "only numbers, names, + - * / ** ( ) and commas are allowed")
            raise ExpressionError(f"unexpected character {ch!r} at column {pos + 1}: {hint}")
        kind = m.lastgroup or ""
        if kind != "ws":
            tokens.append(_Token(kind, m.group(), pos + 1))
        pos = m.end()
    if len(tokens) > MAX_NODES:
        raise ExpressionError(f"expression too large ({len(tokens)} tokens, at most {MAX_NODES})")
    tokens.append(_Token("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, text: str, names: dict[str, sp.Symbol]) -> None:
        self.tokens = _tokenize(text)
        self.i = 0
        self.names = names
        self.depth = 0

    # -- helpers -----------------------------------------------------------------
    def peek(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> _Token:
        tok = self.take()
        if tok.text != text:
            found = "the end of the expression" if tok.kind == "end" else repr(tok.text)
            raise ExpressionError(f"expected {text!r} at column {tok.col}, found {found}")
        return tok

    def _enter(self, tok: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(
                f"expression nested too deeply at column {tok.col} (more than {MAX_DEPTH} levels)"
            )

    # -- grammar -----------------------------------------------------------------
    def parse(self) -> sp.Expr:
        tok = self.peek()
        if tok.kind == "end":
            raise ExpressionError("empty expression")
        value = self.expr()
        tok = self.peek()
        if tok.kind != "end":
            raise ExpressionError(f"unexpected {tok.text!r} at column {tok.col}")
        return value

    def expr(self) -> sp.Expr:
        value = self.term()
        while self.peek().text in ("+", "-"):
            op = self.take()
            rhs = self.term()
            value = _combine(op, _add(value, rhs, op.text))
        return value

    def term(self) -> sp.Expr:
        tok = self.peek()
        if tok.text in ("+", "-"):
            self.take()
            self._enter(tok)
            operand = self.term()
            self.depth -= 1
            return _combine(tok, lambda: -operand if tok.text == "-" else operand)
        value = self.unary()
        while self.peek().text in ("*", "/"):
            op = self.take()
            rhs = self.unary()
            value = _combine(op, _mul(value, rhs, op.text))
        return value

    def unary(self) -> sp.Expr:
        tok = self.peek()
        if tok.text in ("+", "-"):
            self.take()
            self._enter(tok)
            operand = self.unary()
            self.depth -= 1
            return -operand if tok.text == "-" else operand
        return self.power()

    def power(self) -> sp.Expr:
        base = self.atom()
        if self.peek().text == "**":
            op = self.take()
            self._enter(op)
            exponent = self.unary()
            self.depth -= 1
            _check_power(base, exponent, op)
            return _combine(op, lambda: sp.Pow(base, exponent))
        return base

    def atom(self) -> sp.Expr:
        tok = self.take()
        if tok.kind == "num":
            return _number(tok)
        if tok.kind == "name":
            if self.peek().text == "(":
                return self.call(tok)
            return self.name(tok)
        if tok.text == "(":
            self._enter(tok)
            value = self.expr()
            self.expect(")")
            self.depth -= 1
            return value
        if tok.kind == "end":
            raise ExpressionError("the expression ends too early")
        raise ExpressionError(f"unexpected {tok.text!r} at column {tok.col}")

    def name(self, tok: _Token) -> sp.Expr:
        if tok.text.startswith("_"):
            raise ExpressionError(
                f"name {tok.text!r} at column {tok.col} is not allowed: names may not start "
                "with an underscore"
            )
        if tok.text in self.names:
            return self.names[tok.text]
        if tok.text in CONSTANTS:
            return CONSTANTS[tok.text]
        if tok.text in FUNCTIONS:
            raise ExpressionError(f"function {tok.text!r} at column {tok.col} needs arguments")
        raise ExpressionError(
            f"unknown name {tok.text!r} at column {tok.col}",
            valid=", ".join([*self.names, *CONSTANTS]),
        )

    def call(self, tok: _Token) -> sp.Expr:
        if tok.text not in FUNCTIONS:
            if tok.text in self.names or tok.text in CONSTANTS:
                raise ExpressionError(f"{tok.text!r} at column {tok.col} is not a function")
            raise ExpressionError(
                f"unknown function {tok.text!r} at column {tok.col}", valid=", ".join(FUNCTIONS)
            )
        func, arities = FUNCTIONS[tok.text]
        self.expect("(")
        self._enter(tok)
        args = [self.expr()]
        while self.peek().text == ",":
            self.take()
            args.append(self.expr())
        self.expect(")")
        self.depth -= 1
        if (arities is None and not 2 <= len(args) <= MAX_ARGS) or (arities is not None and len(args) not in arities):
            wanted = f"two to {MAX_ARGS}" if arities is None else " or ".join(map(str, arities))
            raise ExpressionError(
                f"function {tok.text!r} at column {tok.col} takes {wanted} argument(s), "
                f"got {len(args)}"
            )
        return _combine(tok, lambda: func(*args))


def _add(a: sp.Expr, b: sp.Expr, op: str) -> Callable[[], sp.Expr]:
    return lambda: a + b if op == "+" else a - b


def _mul(a: sp.Expr, b: sp.Expr, op: str) -> Callable[[], sp.Expr]:
    return lambda: a * b if op == "*" else a / b


def _number(tok: _Token) -> sp.Expr:
    text = tok.text
    if re.fullmatch(r"[0-9]+", text):
        if len(text.lstrip("0")) > MAX_INT_DIGITS:
            raise ExpressionError(f"integer at column {tok.col} has more than {MAX_INT_DIGITS} digits")
        return sp.Integer(int(text))
    return sp.Float(_finite_float(float(text), f"number {text!r} at column {tok.col}"))


def _finite_float(value: float, what: str) -> float:
    if not math.isfinite(value) or abs(value) > MAX_FLOAT_MAGNITUDE:
        raise ExpressionError(f"{what} is not a finite number of magnitude at most {MAX_FLOAT_MAGNITUDE:g}")
    return value


def _check_power(base: sp.Expr, exponent: sp.Expr, tok: _Token) -> None:
    if base.is_Number and exponent.is_Number:
        b = abs(float(base))
        e = float(exponent)
        if b not in (0.0, 1.0) and abs(math.log10(b) * e) > MAX_POWER_DIGITS:
            raise ExpressionError(f"power at column {tok.col} gives a number that is too large")
    elif exponent.is_Number:
        if abs(float(exponent)) > MAX_SYMBOLIC_POWER:
            raise ExpressionError(f"power at column {tok.col}: exponents of non-constant bases are limited to "
                                  f"{MAX_SYMBOLIC_POWER} in magnitude")
    elif _tower(exponent) + 1 > MAX_TOWER:
        raise ExpressionError(f"power at column {tok.col}: exponents nest more than {MAX_TOWER} levels deep")


def _tower(e: sp.Expr) -> int:
    """How deeply non-constant exponents nest in ``e`` (exp counts as a power)."""
    if not isinstance(e, sp.Basic) or e.is_Number or e.is_Symbol:
        return 0
    inner = max((_tower(a) for a in e.args), default=0)
    if isinstance(e, sp.exp) or (isinstance(e, sp.Pow) and not e.exp.is_Number):
        return inner + 1
    return inner


def _combine(tok: _Token, build: Callable[[], sp.Expr]) -> sp.Expr:
    try:
        value = build()
    except (ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError,
            AttributeError) as exc:
        raise ExpressionError(f"cannot evaluate near column {tok.col}: {exc}") from None
    if value.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise ExpressionError(f"undefined value (division by zero or similar) near column {tok.col}")
    if isinstance(value, sp.exp) and _tower(value) > MAX_TOWER:
        raise ExpressionError(f"exp at column {tok.col}: exponents nest more than {MAX_TOWER} levels deep")
    if value.has(sp.I):
        raise ExpressionError(f"complex value near column {tok.col}")
    if value.is_Number and not math.isfinite(float(value)):
        raise ExpressionError(f"number too large near column {tok.col}")
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
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
    names: dict[str, sp.Symbol] = {}
    for v in variables:
        if v not in _BASE_SYMBOLS:
            raise ExpressionError(f"unknown variable {v!r}", valid="x, y, z, t")
        names[v] = _BASE_SYMBOLS[v]
    for p in params:
        if p in _BASE_SYMBOLS or p in FUNCTIONS or p in CONSTANTS or p.startswith("_"):
            raise ExpressionError(f"parameter name {p!r} is reserved")
        names[p] = param_symbol(p)
    return _Parser(text, names).parse()


def as_expr(
    value: object,
    *,
    variables: Sequence[str] = ("x", "y", "z", "t"),
    params: Iterable[str] = (),
) -> sp.Expr:
    """A JSON value (number or expression string) as a sympy expression."""
    if isinstance(value, bool):
        raise ExpressionError("a boolean is not an expression")
    if isinstance(value, int):
        if len(str(abs(value))) > MAX_INT_DIGITS:
            raise ExpressionError(f"integer has more than {MAX_INT_DIGITS} digits")
        return sp.Integer(value)
    if isinstance(value, float):
        return sp.Float(_finite_float(value, "number"))
    if isinstance(value, str):
        return parse(value, variables=variables, params=params)
    raise ExpressionError(f"expected a number or an expression string, not {type(value).__name__}")


def exact(e: sp.Expr) -> sp.Expr:
    """``e`` with every float replaced by the exact decimal rational it was written as
    (0.1 -> 1/10), so derived data and residual checks are exact."""
    floats = e.atoms(sp.Float) if isinstance(e, sp.Basic) else set()
    if not floats:
        return e
    return e.xreplace({f: sp.Rational(repr(float(f))) for f in floats})
