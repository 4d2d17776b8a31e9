"""Compact support: a manufactured part that is zero outside a ball strictly inside the domain.

A manufactured solution may carry one *support factor* ``max(0, g)``, g = a - b |x - c|^2 (b > 0):
zero outside the ball of centre c and radius sqrt(a / b), and a power of it, ``max(0, g)**k``,
times any expression is a part that no boundary datum sees -- whatever the outline.  The part that
vanishes on the boundary is otherwise a product of the outline's level sets, whose nonlinear and
fourth-order forcings on outlines of 12 to 48 carriers print in 20 000 to 650 000 characters
(``casekit.authoring.sibling``); the support factor's are the same size on a gear as on a square.

Derived data must still be printable and hide the solution:

* :func:`through` applies a differential operator (a family's PDE, flux, a Laplacian) to fields
  with the factor and returns ``outside + max(0, g)**m * inside``: ``outside`` what the operator
  gives where the factor is zero, ``inside`` the rest divided by the factor's lowest power m it
  carries -- an expression of the coordinates with no ``max``, multiplied out by derivation like
  any derived datum (:func:`expand`), so no power of the factor's part stands apart in it (a
  forcing written as a polynomial *in* the factor would give the part away: for a cubic reaction
  the coefficient of its highest power is the part cubed).  A power too low for the operator's
  order (m = 0: a datum that jumps across the sphere) is refused.
* :func:`outside` is a field where the factor is zero: what every boundary datum is made from
  (composed with its part's warp, as every datum is), once :func:`check_inside` has confirmed the
  ball lies inside the domain, clear of its boundary.

sympy differentiates ``max`` into ``Heaviside`` and ``DiracDelta``, which neither the grammar
nor the tracks know: :func:`through` never lets them appear.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import sympy as sp

from casekit.errors import CasekitError
from casekit.expr import size
from casekit.expr.parser import COORDS

#: the least gap between the support ball and the domain's boundary, a share of the domain's diameter:
#: boundary data are made from the solution without the factor (:func:`outside`), exact only where
#: the factor and its derivatives vanish, and a mesh cell at the boundary should not reach the ball
CLEARANCE = 0.02

#: the function that stands for the support factor while an operator is applied
_FACTOR = sp.Function("_support")


class SupportError(CasekitError):
    """A support factor that is not of the accepted form, or an operator it cannot go through."""


def _leaves(value: Any) -> Iterable[sp.Expr]:
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif value is not None:
        yield sp.sympify(value)


def _is_factor(a: sp.Basic) -> bool:
    return isinstance(a, sp.Max) and len(a.args) == 2 and sp.S.Zero in a.args


def factors(value: Any) -> set[sp.Max]:
    """The distinct support factors ``max(0, g)`` in an expression or a nested field structure."""
    return {a for e in _leaves(value) for a in e.atoms(sp.Max) if _is_factor(a)}


def factor_of(value: Any) -> sp.Max | None:
    """The one support factor of ``value``, None without one; more than one is refused."""
    found = factors(value)
    if len(found) > 1:
        raise SupportError(f"a manufactured solution may carry one support factor max(0, g); this one has "
                           f"{len(found)}", valid="one factor max(0, a - b*((x - c1)**2 + ...)), its powers and "
                           "multiples")
    return next(iter(found), None)


def argument(factor: sp.Max) -> sp.Expr:
    """g of ``max(0, g)``."""
    return factor.args[1] if factor.args[0] == 0 else factor.args[0]


def ball(factor: sp.Max, dim: int) -> tuple[tuple[float, ...], float]:
    """Centre and radius of the ball where ``factor`` is positive; refused unless g is
    a - b |x - c|^2 with a, b > 0 in the domain's coordinates."""
    g = sp.expand(argument(factor))
    named = {s.name: s for s in g.free_symbols}
    xs = tuple(named.get(c.name, c) for c in COORDS[:dim])
    form = "max(0, a - b*((x - c1)**2 + (y - c2)**2" + (" + (z - c3)**2" if dim == 3 else "") + ")), a, b > 0"
    try:
        poly = sp.Poly(g, *xs)
    except sp.PolynomialError:
        raise SupportError(f"support factor max(0, {g}) is not a polynomial in {', '.join(map(str, xs))}",
                           valid=form) from None
    b = -poly.coeff_monomial(xs[0] ** 2)
    ok = poly.total_degree() == 2 and b.is_number and float(b) > 0
    for i, xi in enumerate(xs):
        ok = ok and poly.coeff_monomial(xi**2) == -b
        for xj in xs[i + 1:]:
            ok = ok and poly.coeff_monomial(xi * xj) == 0
    if not ok:
        raise SupportError(f"support factor max(0, {g}) is not a ball's", valid=form)
    centre = tuple(float(poly.coeff_monomial(xi) / (2 * b)) for xi in xs)
    a = float(g.subs(dict(zip(xs, centre, strict=True))))
    if not a > 0:
        raise SupportError(f"support factor max(0, {g}) is zero everywhere", valid=form)
    return centre, (a / float(b)) ** 0.5


def check_inside(factor: sp.Max, domain: Any, clearance: float = CLEARANCE) -> None:
    """Refuse a ball that is not inside ``domain`` with at least ``clearance`` (a share of the
    domain's diameter) between it and every boundary part: its centre strictly inside, and its
    radius below the centre's exact distance to the boundary."""
    import numpy as np

    centre, radius = ball(factor, domain.dim)
    point = np.asarray([list(centre) + [0.0] * (3 - len(centre))])
    distance = float(domain.geometry.distance(point)[0])
    inside = bool(domain.geometry.strictly_inside(point)[0])
    gap = clearance * domain.geometry.diameter()
    if not inside or radius + gap >= distance:
        where = ", ".join(f"{c:g}" for c in centre)
        raise SupportError(f"the support ball (centre ({where}), radius {radius:.4g}) is not inside domain "
                           f"{domain.name!r} clear of its boundary (the centre is "
                           f"{'at distance ' + format(distance, '.4g') + ' from it' if inside else 'outside'})",
                           valid=f"a ball inside the domain, radius below the centre's distance to the boundary"
                                 f"{f' minus {gap:.3g}' if gap else ''}")


def outside(value: Any) -> Any:
    """``value`` (an expression, or a tuple/list of them) where its support factor is zero."""
    if isinstance(value, (list, tuple)):
        return type(value)(outside(v) for v in value)
    e = sp.sympify(value)
    found = factors(e)
    return e.xreplace(dict.fromkeys(found, sp.S.Zero)) if found else e


def through(fn: Callable[..., Any], fields: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(fields, *args, **kwargs)`` for fields that may carry a support factor, every resulting
    expression in the form ``outside + max(0, g)**m * inside`` (see the module docstring); without
    a factor, ``fn``'s own result."""
    factor = factor_of(fields)
    if factor is None:
        return fn(fields, *args, **kwargs)
    stand_in = _FACTOR(*COORDS)
    result = fn(_replace(fields, {factor: stand_in}), *args, **kwargs)
    return _map(result, lambda e: _split(e, stand_in, factor))


def _replace(value: Any, mapping: dict) -> Any:
    if isinstance(value, dict):
        return {k: _replace(v, mapping) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_replace(v, mapping) for v in value)
    return sp.sympify(value).xreplace(mapping) if value is not None else value


def _map(value: Any, fn: Callable[[sp.Expr], sp.Expr]) -> Any:
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, sp.MatrixBase):
        return value.applyfunc(fn)
    return fn(sp.sympify(value)) if value is not None else value


def _split(e: sp.Expr, stand_in: sp.Expr, factor: sp.Max) -> sp.Expr:
    if not e.has(stand_in):
        return e
    derivatives = {d for d in e.atoms(sp.Derivative) if d.expr == stand_in}
    zero = {**dict.fromkeys(derivatives, sp.S.Zero), stand_in: sp.S.Zero}
    outer = e.xreplace(zero)
    # bounded like every derivation's expansion: a hostile power is refused before sympy runs it
    terms = [t for t in sp.Add.make_args(size.expand(e, "a datum derived through the support factor"))
             if t.has(stand_in)]
    lowest = None
    for term in terms:
        power = sp.S.Zero
        for base, exp in term.as_powers_dict().items():
            if base == stand_in:
                power = exp
            elif base.has(stand_in) and not isinstance(base, sp.Derivative):
                raise SupportError("a support factor inside a function of the solution (a non-polynomial "
                                   "nonlinearity) cannot be derived through",
                                   valid="a polynomial nonlinearity, or a solution without max(0, g)")
        if not (power.is_Integer and power >= 0):
            raise SupportError(f"the support factor appears with power {power} in a derived datum",
                               valid="non-negative integer powers")
        lowest = power if lowest is None else min(lowest, power)
    if not terms:
        return outer
    if lowest == 0:
        raise SupportError("the support factor's power is too low for the operator: the derived datum jumps "
                           "where the factor starts", valid="max(0, g)**k with k above the operator's order")
    g = argument(factor)
    inner = sp.Add(*(t / stand_in**lowest for t in terms))
    inner = inner.subs(stand_in, g).doit()
    return outer + sp.Mul(factor**lowest, inner)


def expand(e: Any, expander: Callable[[sp.Expr], sp.Expr]) -> sp.Expr:
    """``expander`` (derivation's bounded ``sympy.expand``) applied to an expression, keeping a support
    factor's power whole: ``outside + max(0, g)**m * inside`` with both parts multiplied out, never
    the factor distributed over the inside's terms (each would print it again)."""
    e = sp.sympify(e)
    factor = factor_of(e)
    if factor is None:
        return expander(e)
    rest, parts = [], []
    for term in sp.Add.make_args(e):
        (parts if term.has(factor) else rest).append(term)
    powers = []
    for term in parts:
        power = sp.Mul.make_args(term)
        k = next((f.exp if isinstance(f, sp.Pow) and f.base == factor else sp.S.One
                  for f in power if f == factor or (isinstance(f, sp.Pow) and f.base == factor)), None)
        if k is None or not (k.is_Integer and k > 0):
            raise SupportError("the support factor appears inside a function in a derived datum",
                               valid="a polynomial in the factor's powers times expressions of the coordinates")
        powers.append(int(k))
    lowest = min(powers)
    # where the product is not zero the factor is its argument
    inside = sp.Add(*(t / factor**lowest for t in parts)).xreplace({factor: argument(factor)})
    return sp.Add(expander(sp.Add(*rest)), sp.Mul(factor**lowest, expander(inside)))
