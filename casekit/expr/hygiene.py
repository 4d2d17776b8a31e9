"""Expression hygiene: agent-visible expressions an honest solver can transcribe as written.

An agent turns case_spec expressions into code (UFL, NumPy, muParser, C++).  Literals such as
``273323000000000000000000`` overflow integer constants in form compilers (silently, with a
warning), and terms like ``-3.349132191840704e-31*x**2`` are round-off that no solver should
have to carry.  So every agent-visible expression must have

* integers, and numerators and denominators of rationals, of at most :data:`MAX_DIGITS` digits,
* floats of at most 17 significant digits (what ``repr`` prints for a double),
* no term of any sum below :data:`ROUNDOFF` relative to that sum's scale on the domain,
* no exact-zero terms (sympy never keeps them).

:func:`violations` finds what breaks a rule; :func:`clean` is what derivation applies so it never
produces one: large exact numbers become 17-digit floats, round-off terms are dropped.  The
change is at double precision: the validator's residual checks accept it (relative 1e-13).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import sympy as sp

MAX_DIGITS = 8
ROUNDOFF = 1e-14


@dataclass(frozen=True)
class Violation:
    rule: str  # literal | roundoff
    literal: str
    message: str


@dataclass(frozen=True)
class Sampler:
    """Where expressions are measured: points inside the domain and the times of interest."""

    points: np.ndarray
    times: tuple[float, ...]
    dim: int

    def magnitude(self, e: sp.Expr) -> float:
        from casekit.leak import evaluate

        best = 0.0
        for t in self.times:
            try:
                with np.errstate(all="ignore"):
                    v = np.asarray(evaluate(e, self.points, t, self.dim), dtype=float)
            except ValueError:  # an expression of more than the coordinates (R(u)): not measurable here
                return float("inf")
            if v.size == 0 or not np.isfinite(v).all():
                return float("inf")
            best = max(best, float(np.max(np.abs(v))))
        return best


def _digits(n: int) -> int:
    return len(str(abs(int(n))))


def _big(a: sp.Basic) -> bool:
    return isinstance(a, sp.Rational) and (_digits(a.p) > MAX_DIGITS or _digits(a.q) > MAX_DIGITS)


def _literal_problems(e: sp.Basic) -> Iterator[Violation]:
    for a in sp.preorder_traversal(e):
        if isinstance(a, sp.Integer):
            if _digits(a) > MAX_DIGITS:
                yield Violation("literal", str(a), f"integer literal {a} has more than {MAX_DIGITS} digits")
        elif isinstance(a, sp.Rational):
            if _big(a):
                yield Violation("literal", f"{a.p}/{a.q}", f"rational literal {a.p}/{a.q} has more than "
                                f"{MAX_DIGITS} digits in its numerator or denominator")
        elif isinstance(a, sp.Float):
            text = repr(float(a))
            mantissa = text.split("e")[0].replace("-", "").replace(".", "").strip("0")
            if len(mantissa) > 17:
                yield Violation("literal", text, f"float literal {text} has more than 17 significant digits")


def _roundoff(add: sp.Add, sampler: Sampler) -> list[tuple[sp.Expr, float, float]]:
    """The terms of ``add`` that are round-off: (term, its magnitude, the sum's scale)."""
    mags = [sampler.magnitude(term) for term in add.args]
    scale = max([sampler.magnitude(add), *mags])
    if not np.isfinite(scale) or scale == 0:
        return []
    return [(term, m, scale) for term, m in zip(add.args, mags, strict=True) if m < ROUNDOFF * scale]


def violations(e: sp.Expr, sampler: Sampler | None = None) -> list[Violation]:
    """What breaks the hygiene rules in ``e`` (the round-off rule needs a ``sampler``)."""
    out = list(_literal_problems(e))
    if sampler is not None:
        for add in (a for a in sp.preorder_traversal(e) if isinstance(a, sp.Add)):
            for term, m, scale in _roundoff(add, sampler):
                text = str(term)[:80]
                out.append(Violation("roundoff", text, f"the term {text} is round-off ({m:.1e} in a sum of scale "
                                     f"{scale:.1e})"))
    return out


def clean(e: sp.Expr, sampler: Sampler | None = None) -> sp.Expr:
    """``e`` with large exact numbers as 17-digit floats and round-off terms of every sum dropped."""
    if not isinstance(e, sp.Basic) or (e.is_Atom and not _big(e)):
        return e
    if _big(e):
        return sp.Float(float(e), 17)
    args = [clean(a, sampler) for a in e.args]
    out = e.func(*args) if args != list(e.args) else e
    if sampler is not None and isinstance(out, sp.Add):
        drop = {term for term, _, _ in _roundoff(out, sampler)}
        if drop:
            out = sp.Add(*(a for a in out.args if a not in drop))
    return out


def clean_text(e: sp.Expr, sampler: Sampler | None = None, rounds: int = 4) -> str:
    """``e`` cleaned and printed so that what an agent (or the validator) parses back is clean too.

    Printing can undo :func:`clean`: a parser distributes a number over a sum, so the clean text
    ``15625*(-250000*x**2 + 1)*exp(x)/1555848`` reads back with the literal ``-3906250000``.  The
    parsed form is cleaned and printed again until it is stable; the last resort writes every
    number as a double (17 significant digits), which no parse can enlarge.
    """
    from casekit.expr.parser import as_expr
    from casekit.expr.printers import to_text

    # the symbols beyond the coordinates and time (the unknown in a reaction term R(u))
    params = sorted(s.name for s in e.free_symbols if s.name not in ("x", "y", "z", "t"))

    def parse(text: str) -> sp.Expr:
        return as_expr(text, params=params)

    text = to_text(clean(e, sampler))
    for _ in range(rounds):
        parsed = parse(text)
        if next(_literal_problems(parsed), None) is None:
            return text
        text = to_text(clean(parsed, sampler))
    return to_text(parse(text).evalf(17))
