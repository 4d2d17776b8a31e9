"""Float noise: literals that are a short value plus a few ulps of round-off.

Authored sources and float geometry carry values such as ``0.39999999999999974`` (a dumbbell's
bridge side, computed as ``0.5 - 0.2/2`` in floats), ``-0.5000000000000001`` (``cos(120 deg)``) or
``6.123233995736766e-17`` (``cos(90 deg)``, which is zero).  Derived data inherit them, and the
exact arithmetic of derivation blows them up (``39999999999999974/10**17`` times a forcing gives
17-digit coefficients).  A case author would never write them; an agent should never read them.

:func:`short_value` names the value a float is noise of: a decimal of at most
:data:`SHORT_DIGITS` significant digits or a rational of denominator at most
:data:`MAX_DENOMINATOR`, within :data:`NOISE_RTOL` relative, for a float whose shortest ``repr``
has at least :data:`NOISY_DIGITS` significant digits.  Derivation (:mod:`casekit.derive`) applies
it to what the visible data are computed from -- the manufactured solution's literals
(:func:`snap_expr`), number parameters (:func:`snap_number`) and the boundary carriers' points
and normals (:func:`snap_carrier`, where a component below :data:`NOISE_RTOL` of the geometry's
scale is zero) -- so that the data come out exact.  Values without noise are returned as the
very same objects: a source without noise derives the same case_spec, byte for byte.

:func:`noise` is the validator's side (``casekit.validate.case_checks``, check ``float_noise``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from fractions import Fraction
from typing import Any

import sympy as sp

#: relative distance within which a float is round-off of a short value
NOISE_RTOL = 1e-12
#: significant digits of a short decimal
SHORT_DIGITS = 8
#: largest denominator of a simple rational (1/3, 13/30, 1/9)
MAX_DENOMINATOR = 1000
#: a float printed with fewer significant digits than this is what its author typed
NOISY_DIGITS = 15


def significant_digits(v: float) -> int:
    """Significant digits of the shortest ``repr`` of ``v`` (``0.1`` -> 1, ``0.7999999999999998`` -> 16)."""
    mantissa = repr(abs(float(v))).lower().split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) or 1


def _close(a: Fraction, v: float) -> bool:
    return a != 0 and abs(float(a) - v) <= NOISE_RTOL * abs(float(a))


def short_value(v: float) -> Fraction | None:
    """The short decimal (fewest digits first) or simple rational that ``v`` is float noise of;
    ``None`` when ``v`` is printed short already, is not near one, or is not finite."""
    if not math.isfinite(v) or v == 0 or significant_digits(v) < NOISY_DIGITS:
        return None
    for k in range(SHORT_DIGITS):
        dec = Fraction(f"{v:.{k}e}")  # k + 1 significant digits
        if _close(dec, v):
            return dec
    rat = Fraction(v).limit_denominator(MAX_DENOMINATOR)
    return rat if _close(rat, v) else None


def snap_float(v: float) -> float:
    """``v`` as the double nearest the short value it is noise of (``0.7999999999999998`` -> ``0.8``,
    ``1.3333333333333335`` -> ``1.3333333333333333``), else ``v`` itself."""
    s = short_value(v)
    return v if s is None else float(s)


def snap_number(v: Any) -> Any:
    """A JSON number as in :func:`snap_float` (an int or bool, or a float without noise, unchanged)."""
    if isinstance(v, float):
        s = snap_float(v)
        if s != v:
            return int(s) if s.is_integer() else s
    return v


def _snap_atom(a: sp.Basic) -> sp.Basic | None:
    if isinstance(a, sp.Float):
        s = short_value(float(a))
    elif isinstance(a, sp.Rational) and not isinstance(a, sp.Integer) and max(len(str(abs(a.p))), len(str(a.q))) >= 13:
        # a float literal made exact by ``casekit.expr.exact`` (0.39999999999999974 -> 39999999999999974/10**17)
        s = short_value(float(a))
    else:
        return None
    return None if s is None else sp.Rational(s.numerator, s.denominator)


def snap_expr(e: Any) -> Any:
    """``e`` (a sympy expression or a tuple of them) with every noisy literal replaced by the exact
    short value; ``e`` itself (the same object) when none is noisy."""
    if isinstance(e, tuple):
        out = tuple(snap_expr(c) for c in e)
        return e if all(a is b for a, b in zip(out, e, strict=True)) else out
    if not isinstance(e, sp.Basic):
        return e
    subs = {}
    for a in e.atoms(sp.Number):
        s = _snap_atom(a)
        if s is not None:
            subs[a] = s
    return e.xreplace(subs) if subs else e


def snap_coordinate(v: float, scale: float) -> float:
    """A geometric coordinate or normal component: zero when below :data:`NOISE_RTOL` of ``scale``
    (``cos(90 deg)``), else :func:`snap_float`."""
    v = float(v)
    if v != 0 and abs(v) <= NOISE_RTOL * scale:
        return 0.0
    return snap_float(v)


def _snap_tuple(values: tuple, scale: float) -> tuple:
    out = tuple(snap_coordinate(v, scale) for v in values)
    return values if all(float(a) == float(b) for a, b in zip(out, values, strict=True)) else out


def snap_carrier(carrier: Any, scale: float) -> Any:
    """A boundary carrier (``casekit.domains.geometry.carriers``) with its points snapped relative to
    ``scale`` (the domain's size) and its unit normal relative to 1; the same object when nothing
    changes.  Only the sympy forms (level set, normal, projection) it prints differ: meshing never
    sees it."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(carrier):
        value = getattr(carrier, f.name)
        if f.name == "normal":
            new = _snap_tuple(value, 1.0)
        elif isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value):
            new = _snap_tuple(value, scale)
        elif isinstance(value, float):
            new = snap_coordinate(value, scale)
        else:
            continue
        if new is not value and new != value:
            changes[f.name] = new
    return dataclasses.replace(carrier, **changes) if changes else carrier


#: a number literal in expression text
_NUMBER = re.compile(r"(?<![A-Za-z_0-9.])(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _suspect(text: str) -> bool:
    """Whether ``text`` has a literal that may be noise (a long mantissa or an exponent)."""
    return any("e" in m.lower() or significant_digits(float(m)) >= NOISY_DIGITS
               for m in _NUMBER.findall(text) if "." in m or "e" in m.lower())


def _snapped_literal(a: sp.Float) -> sp.Basic | None:
    v = float(a)
    if is_noise(v) is None:
        return None
    s = short_value(v)
    if s is None:  # round-off of zero
        return sp.Integer(0)
    # a float stays a float (an exact rational can grow when the text is parsed and distributed)
    return sp.Integer(s.numerator) if s.denominator == 1 else sp.Float(float(s))


def snap_text(text: str, e: sp.Basic | None = None) -> str:
    """Expression text (as :func:`casekit.expr.to_text` prints it) with each noisy float literal
    (:func:`is_noise`) written as the short value, and a literal that is round-off of zero
    removed with its term; ``text`` itself when it has none.  ``e`` (the printed expression)
    names the symbols beyond the coordinates (the unknown of a reaction term)."""
    if not _suspect(text):
        return text
    from casekit.expr import as_expr, to_text

    names = {s.name for s in (e.free_symbols if isinstance(e, sp.Basic) else ())}
    parsed = as_expr(text, params=sorted(names - {"x", "y", "z", "t"}))
    subs = {a: s for a in parsed.atoms(sp.Float) if (s := _snapped_literal(a)) is not None}
    return to_text(parsed.xreplace(subs)) if subs else text


# --------------------------------------------------------------------------- the validator's side
def is_noise(v: float, in_expression: bool = True) -> str | None:
    """Why the literal ``v`` is float noise (``None`` when it is not): a long literal within
    :data:`NOISE_RTOL` of a short value it is not the nearest double of, or, in an expression, a
    long (:data:`NOISY_DIGITS`) non-zero literal below :data:`NOISE_RTOL` (coordinates and the other terms are O(1) on a
    case's domain: a coefficient of 1e-12 is round-off of zero, never data).  The threshold is
    absolute on purpose: relative to the largest literal of a long product it would zero the
    O(1) coefficients of level sets next to a 1e13 prefactor."""
    v = float(v)
    if in_expression and v != 0 and math.isfinite(v) and abs(v) <= NOISE_RTOL \
            and significant_digits(v) >= NOISY_DIGITS:  # 1e-12 as typed is data, 6.123233995736766e-17 is not
        return f"the literal {v!r} is round-off of zero"
    s = short_value(v)
    if s is not None and float(s) != v:
        shown = str(s.numerator) if s.denominator == 1 else (
            f"{s.numerator}/{s.denominator}" if s.denominator <= MAX_DENOMINATOR and len(str(s)) < len(f"{float(s)!r}")
            else repr(float(s)))
        return f"the literal {v!r} is float noise of {shown}"
    return None


def noise(e: sp.Basic) -> list[str]:
    """Why each noisy literal of a parsed expression is noise (:func:`is_noise`)."""
    if not isinstance(e, sp.Basic):
        return []
    nums = [a for a in e.atoms(sp.Number) if isinstance(a, (sp.Float, sp.Rational))]
    out = []
    for a in sorted(nums, key=lambda a: float(a)):
        if isinstance(a, sp.Float) or (isinstance(a, sp.Rational) and not isinstance(a, sp.Integer)
                                       and max(len(str(abs(a.p))), len(str(a.q))) >= 13):
            why = is_noise(float(a))
            if why:
                out.append(why)
    return out


__all__ = ["MAX_DENOMINATOR", "NOISE_RTOL", "NOISY_DIGITS", "SHORT_DIGITS", "is_noise", "noise", "short_value",
           "significant_digits", "snap_carrier", "snap_coordinate", "snap_expr", "snap_float", "snap_number",
           "snap_text"]
