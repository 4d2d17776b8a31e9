"""Long expressions for muParser as a chain of definitions.

muParser (2.3.3, Debian's, under deal.II 9.4's ``FunctionParser``) refuses an expression longer
than ``MaxLenExpression = 20000`` characters ("Expression too long").  Manufactured data on star
and gear domains exceed it: sympy prints a product of a dozen linear edge factors with 16-digit
rationals, and a forcing repeats it many times.  Such an expression is written as

    _c0 := <text>; _c1 := <text>; ...; <final text>

its common subexpressions (:func:`sympy.cse`) first, then, where a piece is still too long (an
expanded polynomial has no common subexpressions), its arguments grouped into chunks -- every
definition and the final text at most :data:`BUDGET` characters.  casekit's program evaluates the
definitions in order, each with its own muParser over x, y[, z], t (or u) and the earlier names
(``Formula`` in common.cc).  muParser has no ``;`` and no ``:=`` (its ``:`` is the ternary's else,
which casekit never prints), so the separators cannot occur in an expression.  An expression of at
most :data:`LIMIT` characters is printed exactly as before (:func:`casekit.expr.to_muparser`).
"""

from __future__ import annotations

import sympy as sp

from casekit.expr import to_muparser

#: a text up to this long is sent as one muParser expression, exactly as before: muParser 2.3.3
#: takes fewer than 20000 characters, and 10 are left for the program's own "-(...)" around the
#: biharmonic Laplacian data (common.cc, negated).  So no text that works today changes: the
#: longest of the cases that worked is 19252 characters (convection_diffusion_cd_star_6point_gentle;
#: measured over the 709 case sources), and muParser refuses any text of 20000 or more
LIMIT = 19990
#: the longest definition or final text of a chain: 40 % of muParser's limit, so the pieces keep
#: room for a printer that parenthesises a chunk or prints a name longer than estimated
BUDGET = 8000
#: names of the definitions: muParser names may start with '_' (not with a digit); the case's
#: own symbols are x, y, z, t, u and parameters, never with a leading underscore
PREFIX = "_c"
SEPARATOR = "; "
DEFINES = " := "


def to_chain(expr: sp.Expr, budget: int | None = None, limit: int | None = None) -> str:
    """``expr`` as muParser text: :func:`to_muparser`'s when it is at most ``limit`` characters
    (:data:`LIMIT`), else a chain of definitions each (and the final expression) at most ``budget``
    characters (:data:`BUDGET`)."""
    budget = BUDGET if budget is None else budget
    limit = LIMIT if limit is None else limit
    text = to_muparser(expr)
    if len(text) <= limit:
        return text
    defs, final = definitions_of(sp.sympify(expr), budget)
    return SEPARATOR.join([*(f"{name}{DEFINES}{body}" for name, body in defs), final])


def parse_chain(text: str) -> tuple[list[tuple[str, str]], str]:
    """The definitions (name, text) and the final text of a chain (no definitions: plain text)."""
    parts = text.split(";")
    defs = []
    for part in parts[:-1]:
        name, body = part.split(":=", 1)
        defs.append((name.strip(), body.strip()))
    return defs, parts[-1].strip()


class _Chain:
    def __init__(self, budget: int, taken: set[str]) -> None:
        self.budget = budget
        self.defs: list[tuple[str, str]] = []
        self.names = (f"{PREFIX}{k}" for k in range(10**9) if f"{PREFIX}{k}" not in taken)

    def define(self, e: sp.Expr) -> sp.Symbol:
        """A name for ``e`` (which fits the budget), defined after every name it uses."""
        name = next(self.names)
        self.defs.append((name, to_muparser(e)))
        return sp.Symbol(name)

    def fit(self, e: sp.Expr) -> sp.Expr:
        """``e`` rewritten so that it prints within the budget, its excess parts defined."""
        if len(to_muparser(e)) <= self.budget:
            return e
        if not e.args:
            raise ValueError(f"a single muParser token longer than {self.budget} characters")
        args = [self.fit(a) for a in e.args]
        if isinstance(e, (sp.Add, sp.Mul)):
            return self._chunks(type(e), args)
        # a function or power whose arguments fit one by one but not together: name the longest
        rebuilt = e.func(*args)
        while len(to_muparser(rebuilt)) > self.budget:
            longest = max(range(len(args)), key=lambda i: len(to_muparser(args[i])))
            args[longest] = self.define(args[longest])
            rebuilt = e.func(*args)
        return rebuilt

    def _chunks(self, op: type, args: list[sp.Expr]) -> sp.Expr:
        """``op(*args)`` (each argument fitting) with its arguments grouped into defined chunks of
        about half the budget (estimated by the arguments' own lengths; a chunk that still prints
        longer is halved), then fitted again: many chunks are chunked in turn.  Every group gets a
        name, so each round leaves fewer and shorter arguments."""
        groups: list[list[sp.Expr]] = [[]]
        size = 0
        for a in args:
            n = len(to_muparser(a)) + 3  # an operator and parentheses around it
            if groups[-1] and size + n > self.budget // 2:
                groups.append([])
                size = 0
            groups[-1].append(a)
            size += n
        return self.fit(op(*(self._group(op, g) for g in groups)))

    def _group(self, op: type, group: list[sp.Expr]) -> sp.Expr:
        e = op(*group)
        if isinstance(e, sp.Symbol):
            return e
        if len(group) == 1 or len(to_muparser(e)) <= self.budget:
            return self.define(e)
        half = len(group) // 2
        return self.define(op(self._group(op, group[:half]), self._group(op, group[half:])))


def definitions_of(expr: sp.Expr, budget: int) -> tuple[list[tuple[str, str]], str]:
    """The chain of ``expr``: common subexpressions first, each piece fitted to ``budget``."""
    chain = _Chain(budget, {s.name for s in expr.free_symbols})
    symbols = (sp.Symbol(name) for name in chain.names)  # cse's names and the chunks' share one count
    replacements, (reduced,) = sp.cse(expr, symbols=symbols, order="none")
    for sym, value in replacements:
        chain.defs.append((sym.name, to_muparser(chain.fit(value))))
    return chain.defs, to_muparser(chain.fit(reduced))
