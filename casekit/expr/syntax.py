"""Expression text to a syntax tree: the one tokenizer and grammar of casekit's expressions.

No sympy here: calibration solvers run this in every sandboxed solve, where importing sympy
would cost a third of a second per run.  :func:`parse_tree` returns a :class:`Node` tree (the
text as written, nothing simplified) that :mod:`casekit.expr.tree` evaluates with numpy and
:mod:`casekit.solvers.ufl_expr` turns into UFL; :mod:`casekit.expr.parser` builds sympy from the
same tree for derivation and validation.

Grammar (``**`` binds tighter than unary minus, and is right-associative)::

    expr  := term (("+" | "-") term)*
    term  := ("+" | "-") term | unary (("*" | "/") unary)*
    unary := ("+" | "-") unary | power
    power := atom ("**" unary)?
    atom  := NUMBER | NAME | NAME "(" expr ("," expr)* ")" | "(" expr ")"

A leading sign applies to the whole product after it (``-a*b`` is ``-(a*b)``), which is how
sympy prints, so printed expressions read back to the same tree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from casekit.errors import CasekitError

#: the coordinate and time variables an expression may use
VARIABLES = ("x", "y", "z", "t")
MAX_LENGTH = 20_000
MAX_DEPTH = 60
#: bounds that keep derivation (derivatives, residual and leak checks) within seconds and bounded
#: memory for any accepted expression: literal sizes, arguments of min/max, size of the tree
MAX_INT_DIGITS = 30
MAX_FLOAT_MAGNITUDE = 1e100
MAX_ARGS = 8
MAX_NODES = 4000

#: function name -> allowed argument counts (None: two to MAX_ARGS)
ARITIES: dict[str, tuple[int, ...] | None] = {
    "sin": (1,), "cos": (1,), "tan": (1,), "asin": (1,), "acos": (1,), "atan": (1,), "atan2": (2,),
    "sinh": (1,), "cosh": (1,), "tanh": (1,), "exp": (1,), "log": (1,), "sqrt": (1,), "abs": (1,),
    "sign": (1,), "min": None, "max": None,
}
CONSTANTS = ("pi",)
V = TypeVar("V")


class ExpressionError(CasekitError):
    """An expression string that is not accepted, with the offending token and column."""


@dataclass(frozen=True)
class Node:
    """One node of a parsed expression.

    ``op`` is ``num`` (``value`` an int or float), ``var`` (a variable or parameter, ``value``
    its name), ``const`` (``pi``), ``neg``, ``+``, ``-``, ``*``, ``/``, ``**`` (two ``args``) or
    ``call`` (``value`` the function name).  ``col`` is the 1-based column of the token that
    made the node (for error messages); it takes no part in equality.
    """

    op: str
    args: tuple[Node, ...] = ()
    value: int | float | str | None = None
    col: int = field(default=0, compare=False)

    def __neg__(self) -> Node:
        return Node("neg", (self,), col=self.col)

    def names(self) -> set[str]:
        """The variables and parameters the expression uses."""
        out: set[str] = set()
        stack = [self]
        while stack:
            n = stack.pop()
            if n.op == "var":
                out.add(str(n.value))
            stack.extend(n.args)
        return out


def number(value: int | float) -> Node:
    """A JSON number as a node (bounded like a literal in a text)."""
    if isinstance(value, int):
        if len(str(abs(value))) > MAX_INT_DIGITS:
            raise ExpressionError(f"integer has more than {MAX_INT_DIGITS} digits")
        return Node("num", value=value)
    return Node("num", value=finite_float(value, "number"))


def finite_float(value: float, what: str) -> float:
    if not math.isfinite(value) or abs(value) > MAX_FLOAT_MAGNITUDE:
        raise ExpressionError(f"{what} is not a finite number of magnitude at most {MAX_FLOAT_MAGNITUDE:g}")
    return value


def fold[V](root: Node, visit: Callable[[Node, list[V]], V]) -> V:
    """``visit(node, values of its args)`` from the leaves up, without recursion (a sum of
    thousands of terms is a left-nested tree thousands of levels deep)."""
    done: dict[int, V] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            done[id(node)] = visit(node, [done[id(a)] for a in node.args])
        elif id(node) not in done:
            stack.append((node, True))
            stack.extend((a, False) for a in reversed(node.args))
    return done[id(root)]


# --------------------------------------------------------------------------- tokens
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


# --------------------------------------------------------------------------- grammar
class _Parser:
    def __init__(self, text: str, names: tuple[str, ...]) -> None:
        self.tokens = _tokenize(text)
        self.i = 0
        self.names = names
        self.depth = 0

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
            raise ExpressionError(f"expression nested too deeply at column {tok.col} (more than {MAX_DEPTH} levels)")

    def parse(self) -> Node:
        tok = self.peek()
        if tok.kind == "end":
            raise ExpressionError("empty expression")
        value = self.expr()
        tok = self.peek()
        if tok.kind != "end":
            raise ExpressionError(f"unexpected {tok.text!r} at column {tok.col}")
        return value

    def expr(self) -> Node:
        value = self.term()
        while self.peek().text in ("+", "-"):
            op = self.take()
            value = Node(op.text, (value, self.term()), col=op.col)
        return value

    def term(self) -> Node:
        tok = self.peek()
        if tok.text in ("+", "-"):
            return self._signed(tok, self.term)
        value = self.unary()
        while self.peek().text in ("*", "/"):
            op = self.take()
            value = Node(op.text, (value, self.unary()), col=op.col)
        return value

    def unary(self) -> Node:
        tok = self.peek()
        if tok.text in ("+", "-"):
            return self._signed(tok, self.unary)
        return self.power()

    def _signed(self, tok: _Token, operand_of: Callable[[], Node]) -> Node:
        self.take()
        self._enter(tok)
        operand = operand_of()
        self.depth -= 1
        return Node("neg", (operand,), col=tok.col) if tok.text == "-" else operand

    def power(self) -> Node:
        base = self.atom()
        if self.peek().text == "**":
            op = self.take()
            self._enter(op)
            exponent = self.unary()
            self.depth -= 1
            return Node("**", (base, exponent), col=op.col)
        return base

    def atom(self) -> Node:
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

    def name(self, tok: _Token) -> Node:
        if tok.text.startswith("_"):
            raise ExpressionError(f"name {tok.text!r} at column {tok.col} is not allowed: names may not start "
                                  "with an underscore")
        if tok.text in self.names:
            return Node("var", value=tok.text, col=tok.col)
        if tok.text in CONSTANTS:
            return Node("const", value=tok.text, col=tok.col)
        if tok.text in ARITIES:
            raise ExpressionError(f"function {tok.text!r} at column {tok.col} needs arguments")
        raise ExpressionError(f"unknown name {tok.text!r} at column {tok.col}",
                              valid=", ".join([*self.names, *CONSTANTS]))

    def call(self, tok: _Token) -> Node:
        if tok.text not in ARITIES:
            if tok.text in self.names or tok.text in CONSTANTS:
                raise ExpressionError(f"{tok.text!r} at column {tok.col} is not a function")
            raise ExpressionError(f"unknown function {tok.text!r} at column {tok.col}", valid=", ".join(ARITIES))
        arities = ARITIES[tok.text]
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
            raise ExpressionError(f"function {tok.text!r} at column {tok.col} takes {wanted} argument(s), "
                                  f"got {len(args)}")
        return Node("call", tuple(args), tok.text, tok.col)


def _number(tok: _Token) -> Node:
    text = tok.text
    if re.fullmatch(r"[0-9]+", text):
        if len(text.lstrip("0")) > MAX_INT_DIGITS:
            raise ExpressionError(f"integer at column {tok.col} has more than {MAX_INT_DIGITS} digits")
        return Node("num", value=int(text), col=tok.col)
    return Node("num", value=finite_float(float(text), f"number {text!r} at column {tok.col}"), col=tok.col)


def check_names(variables: Sequence[str], params: Sequence[str]) -> tuple[str, ...]:
    """The names an expression may use: ``variables`` (of x, y, z, t) and parameters."""
    for v in variables:
        if v not in VARIABLES:
            raise ExpressionError(f"unknown variable {v!r}", valid="x, y, z, t")
    for p in params:
        if p in VARIABLES or p in ARITIES or p in CONSTANTS or p.startswith("_"):
            raise ExpressionError(f"parameter name {p!r} is reserved")
    return (*variables, *params)


@lru_cache(maxsize=4096)
def parse_tree(text: str, variables: tuple[str, ...] = VARIABLES, params: tuple[str, ...] = ()) -> Node:
    """The syntax tree of ``text`` over ``variables`` and named ``params`` (memoised: trees are
    immutable).  Raises :class:`ExpressionError` naming the offending token."""
    if not isinstance(text, str):
        raise ExpressionError(f"an expression must be a string or a number, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
    return _Parser(text, check_names(variables, params)).parse()


def as_tree(value: object, *, variables: Sequence[str] = VARIABLES, params: Sequence[str] = ()) -> Node:
    """A JSON value (number or expression string) as a syntax tree."""
    if isinstance(value, str):
        return parse_tree(value, tuple(variables), tuple(params))
    if isinstance(value, bool):
        raise ExpressionError("a boolean is not an expression")
    if not isinstance(value, int | float):
        raise ExpressionError(f"expected a number or an expression string, not {type(value).__name__}")
    return number(value)

