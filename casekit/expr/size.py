"""How large an expansion would be, estimated before sympy runs it.

``sympy.expand`` of a power of a sum or of a product of sums writes out every term: the forcing
derived from ``(sin(pi*x) + sin(2*pi*y) + cos(3*pi*x*y) + x**2)**9`` expands to 3420 terms and
took most of a minute before its printed text was refused as too long.  :func:`estimate` reads,
from the tree alone, upper bounds on

* the **terms** of the result, the smaller of two counts: the raw count (a sum has the terms of
  its parts, a product the product of its factors' counts, a power ``b**n`` of a sum of ``k``
  terms ``C(n + k - 1, k - 1)``, the monomials of degree ``n`` in ``k`` unknowns), and the
  monomials the result can have: every term is a product of *atoms* (function applications,
  symbolic and negative powers) times a monomial in the coordinates and parameters; for each
  distinct product of atoms the walk keeps the largest degree and the symbols of its polynomial
  part, ``C(d + m, m)`` monomials (a product of ten linear level sets in ``x, y`` times a sine
  has 66 terms, not ``3**10``);
* the **work**: the products sympy forms before like terms combine, in the order
  ``Mul._expandsums`` forms them (halves of the factor list, each combined), plus the raw terms
  of every power of a sum, of every function argument and of every denominator it expands.

A root of a sum counts as itself or as the sum to the next integer power (``sqrt(b) * sqrt(b)``
is ``b``, which sympy expands again).

:func:`expand` refuses with a one-line :class:`TooLarge` before any expansion when
either bound is above its limit (:data:`MAX_TERMS`, :data:`MAX_WORK`); :func:`check_printable`
refuses an expression kept unexpanded whose text could not be shorter than ``MAX_LENGTH``.  The walk takes time
linear in the distinct nodes and at most :data:`MAX_TERMS` products of atoms per node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import sympy as sp

from casekit.expr.syntax import MAX_LENGTH, ExpressionError

#: most terms an expansion may have: ten times the largest derived expression of the committed
#: cases (209 terms, a Poisson case on the star); at the ten or more characters a derived term
#: prints in, more would not fit in an agent-visible expression (casekit.expr.MAX_LENGTH)
MAX_TERMS = 2000
#: most products sympy may form on the way (about 0.1 ms each with 30-digit rationals)
MAX_WORK = 400_000
#: where counts stop growing (the walk never handles huge integers)
_CAP = 10**15

#: a product of atoms (atom -> exponent) and, for it, the polynomial part's largest total degree
#: and symbols; None: more than MAX_TERMS products of atoms (too many to follow, and to expand)
Shape = dict[frozenset, tuple[int, frozenset]] | None


class TooLarge(ExpressionError):
    """An expression whose expansion would be larger than :data:`MAX_TERMS` terms or cost more
    than :data:`MAX_WORK` products, or whose text would be longer than :data:`MAX_LENGTH`."""


@dataclass(frozen=True)
class Size:
    """Upper bounds on one expanded (sub)expression."""

    terms: int
    work: int
    shape: Shape = None

    @property
    def too_large(self) -> bool:
        return self.terms > MAX_TERMS or self.work > MAX_WORK


def _comb(n: int, k: int) -> int:
    """``C(n, k)``, or :data:`_CAP` once it reaches it (computed incrementally, exact at each step)."""
    k = min(k, n - k)
    if k < 0:
        return 0
    r = 1
    for i in range(1, k + 1):
        r = r * (n - k + i) // i
        if r >= _CAP:
            return _CAP
    return r


def _cap(n: int) -> int:
    return min(_CAP, n)


def _monomials(shape: Shape) -> int:
    if shape is None:
        return _CAP
    return _cap(sum(_comb(d + len(s), len(s)) for d, s in shape.values()))


def _add(shapes: list[Shape]) -> Shape:
    out: dict[frozenset, tuple[int, frozenset]] = {}
    for shape in shapes:
        if shape is None:
            return None
        for atoms, (d, s) in shape.items():
            d0, s0 = out.get(atoms, (0, frozenset()))
            out[atoms] = (max(d, d0), s | s0)
        if len(out) > MAX_TERMS:
            return None
    return out


def _times(a: Shape, b: Shape) -> Shape:
    if a is None or b is None or len(a) * len(b) > MAX_TERMS * 8:
        return None
    out: dict[frozenset, tuple[int, frozenset]] = {}
    for atoms_a, (da, sa) in a.items():
        for atoms_b, (db, sb) in b.items():
            powers = dict(atoms_a)
            for atom, k in atoms_b:
                powers[atom] = powers.get(atom, 0) + k
            key = frozenset(powers.items())
            d0, s0 = out.get(key, (0, frozenset()))
            out[key] = (max(d0, da + db), s0 | sa | sb)
    return out if len(out) <= MAX_TERMS else None


def _power(a: Shape, n: int) -> Shape:
    if a is not None and len(a) == 1:  # one product of atoms: exponents and degree scale
        ((atoms, (d, s)),) = a.items()
        return {frozenset((atom, k * n) for atom, k in atoms): (_cap(d * n), s)}
    out: Shape = {frozenset(): (0, frozenset())}
    while n and out is not None:  # by squaring
        if n & 1:
            out = _times(out, a)
        n >>= 1
        if n:
            a = _times(a, a)
    return out


def _size(raw: int, work: int, shape: Shape) -> Size:
    return Size(min(_cap(raw), _monomials(shape)), _cap(work), shape)


def estimate(e: Any) -> Size:
    """Upper bounds on the terms and the work of ``sympy.expand(e, power_exp=False, log=False)``
    (see the module's docstring)."""
    memo: dict[Any, Size] = {}

    def atom(a: Any, work: int) -> Size:
        return Size(1, _cap(work), {frozenset({(a, 1)}): (0, frozenset())})

    def merge(parts: list[Size]) -> tuple[Size, int]:
        """The product of expanded sums formed as ``Mul._expandsums`` forms it (halves, combined)."""
        if len(parts) == 1:
            return parts[0], 0
        left, wl = merge(parts[: len(parts) // 2])
        right, wr = merge(parts[len(parts) // 2:])
        formed = _cap(left.terms * right.terms)
        return _size(formed, 0, _times(left.shape, right.shape)), _cap(wl + wr + formed)

    def walk(a: Any) -> Size:
        if a in memo:
            return memo[a]
        if a.is_Symbol or a.is_NumberSymbol:  # pi**2 + 2 stays two terms
            out = Size(1, 0, {frozenset(): (1, frozenset({a}))})
        elif a.is_Atom:  # a number
            out = Size(1, 0, {frozenset(): (0, frozenset())})
        elif a.is_Add:
            parts = [walk(b) for b in a.args]
            raw = sum(p.terms for p in parts)
            out = _size(raw, sum(p.work for p in parts) + raw, _add([p.shape for p in parts]))
        elif a.is_Mul:
            parts = [walk(b) for b in a.args]
            sums, plain = [p for p in parts if p.terms > 1], [p for p in parts if p.terms <= 1]
            product, work = merge(sums) if sums else (Size(1, 0, {frozenset(): (0, frozenset())}), 0)
            shape = product.shape
            for p in plain:
                shape = _times(shape, p.shape)
            out = _size(product.terms, sum(p.work for p in parts) + work + product.terms, shape)
        elif a.is_Pow and a.exp.is_Integer and a.exp > 0:
            base, n = walk(a.base), int(a.exp)
            raw = _comb(n + base.terms - 1, base.terms - 1)
            out = _size(raw, base.work + raw, _power(base.shape, n))
        elif a.is_Pow and a.exp.is_Rational and a.exp > 0 and walk(a.base).terms > 1:
            # a root of a sum: products of it are integer powers of the sum (sqrt(b)**2 = b), which
            # sympy expands too: counted as the atom or the sum to the next integer power
            base, k = walk(a.base), math.ceil(a.exp)
            whole = _comb(k + base.terms - 1, base.terms - 1)
            out = Size(_cap(1 + whole), _cap(base.work + whole),
                       _add([{frozenset({(a, 1)}): (0, frozenset())}, _power(base.shape, k)]))
        elif a.is_Pow and a.exp.is_Integer:  # an expanded denominator, one atom
            base = walk(a.base)
            out = atom(a, base.work + _comb(-int(a.exp) + base.terms - 1, base.terms - 1))
        else:  # a function, a symbolic power: its arguments are expanded in place, it stays one factor
            out = atom(a, sum(walk(b).terms + walk(b).work for b in a.args))
        memo[a] = out
        return out

    return walk(sp.sympify(e))


def leaves(e: Any) -> int:
    """The leaves of the tree as printed (a shared subtree counts each time it appears), at most
    :data:`_CAP`: a lower bound on the characters of its text."""
    memo: dict[Any, int] = {}

    def count(a: Any) -> int:
        if a.is_Atom:
            return 1
        if a not in memo:
            memo[a] = min(_CAP, sum(count(b) for b in a.args))
        return memo[a]

    return count(sp.sympify(e))


def check_printable(e: Any, what: str = "the expression") -> None:
    """Raise :class:`TooLarge` when the text of ``e`` would be longer than :data:`MAX_LENGTH`
    (an unexpanded derivative of a product can be hundreds of thousands of characters; printing
    it took minutes before the parser refused it)."""
    n = leaves(e)
    if n > MAX_LENGTH:
        raise TooLarge(f"{what} is too long to print (at least {n} characters, at most {MAX_LENGTH})",
                       valid="a manufactured solution with fewer terms, or a domain with a simpler outline")


def expand(e: Any, what: str = "the expression") -> Any:
    """``sympy.expand(e, power_exp=False, log=False)`` (products and powers of sums written out,
    ``exp(a + b)`` and ``log(a*b)`` kept whole), refused with :class:`TooLarge` (a
    one-line message naming ``what``) before any work when its :func:`estimate` is too large."""
    e = sp.sympify(e)
    s = estimate(e)
    if s.too_large:
        raise TooLarge(
            f"{what} is too large to expand (up to {s.terms} terms and {s.work} products; at most "
            f"{MAX_TERMS} and {MAX_WORK})", valid="a manufactured solution with fewer terms and lower powers of sums")
    return sp.expand(e, power_exp=False, log=False)


__all__ = ["MAX_TERMS", "MAX_WORK", "Size", "TooLarge", "check_printable", "estimate", "expand", "leaves"]
