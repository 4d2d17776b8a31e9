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

What is printed from exact data is left exact: the print pass (:func:`snap_text`, on the text
hygiene prints) writes a literal's short value only when that is within :data:`MAX_ULPS` ulps of
it, and drops a literal that is round-off of zero only when that moves the expression by at most
:data:`ZERO_MOVE` of its term scale.  :func:`text_noise` is that rule, shared with the validator
(``casekit.validate.case_checks``, check ``float_noise``): a case_spec derivation printed is never
flagged.  :func:`is_noise` judges the JSON numbers, which derivation snaps where it reads them.
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
        new: Any
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
#: about how many points derived expressions are printed against (:func:`print_sampler`)
PRINT_POINTS = 150


def print_sampler(points: Any, times: tuple[float, ...], dim: int) -> Any:
    """The sampler derivation prints a case's expressions against: every ``len // PRINT_POINTS``-th
    interior point at ``times`` (the validator's ``float_noise`` check measures on the same one) --
    unless that stride aliases with a structured grid of points and leaves a coordinate with fewer
    than :data:`MIN_SPREAD` values: then the points at a stride coprime to their number
    (:func:`spread_indices`).  A tall periodic strip's 15000 points at stride 100 all had x = 0,
    so printing took sin(2*pi*x) for zero and dropped it from the initial and boundary data.
    Kept here, not in ``casekit.expr`` (solver runtime: an edit there rebuilds every track)."""
    import numpy as np

    from casekit.expr.hygiene import Sampler

    pts = np.asarray(points)
    chosen = pts[::max(1, len(pts) // PRINT_POINTS)]
    if len(pts) and _spread(chosen) < min(MIN_SPREAD, _spread(pts)):
        chosen = pts[spread_indices(len(pts), min(PRINT_POINTS, len(pts)))]
    return Sampler(chosen, tuple(times), dim)


#: a print sampler's points take at least this many values in every coordinate (where the case's
#: points do)
MIN_SPREAD = 10


def _spread(pts: Any) -> int:
    """The fewest distinct values any coordinate of ``pts`` takes."""
    import numpy as np

    return min(np.unique(np.round(pts[:, i], 12)).size for i in range(pts.shape[1])) if len(pts) else 0


def spread_indices(n: int, k: int) -> Any:
    """``k`` indices of ``range(n)`` at a stride near the golden ratio of ``n`` and coprime to it:
    they cover the range evenly without repeating a row or column of a structured grid."""
    import numpy as np

    step = max(1, round(n * 0.6180339887))
    while math.gcd(step, n) != 1:
        step += 1
    return (np.arange(k) * step) % n


_NUMBER = re.compile(r"(?<![A-Za-z_0-9.])(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")

#: the print pass writes a literal's short value only when the short value's double is at most
#: this many ulps from the literal: a derived 17-digit literal further from it is the exact value
#: rounded (``4870144.000000006`` on a gear), which the short value would make inexact
MAX_ULPS = 4
#: a literal that is round-off of zero is dropped only when that moves its expression by at most
#: this fraction of the expression's term scale on the domain (the validator's residual check
#: tolerates ``DOUBLE_PRECISION`` = 1e-13 of it, of which hygienic printing takes its share)
ZERO_MOVE = 1e-15
#: print-pass rounds: dropping a zero reprints the text, which can show other literals to snap
ROUNDS = 4


def printed_short(v: float) -> float | None:
    """The double the print pass writes for the literal ``v``: the nearest double of the short value
    ``v`` is noise of (:func:`short_value`) when that is another double at most :data:`MAX_ULPS`
    ulps from ``v``, else ``None``."""
    v = float(v)
    s = short_value(v)
    if s is None:
        return None
    f = float(s)
    return f if f != v and abs(f - v) <= MAX_ULPS * math.ulp(v) else None


def _zero_suspect(v: float) -> bool:
    """A long non-zero literal below :data:`NOISE_RTOL` (``6.123233995736766e-17``, ``cos(90 deg)``);
    round-off of zero where dropping it does not move its expression (:func:`text_noise`)."""
    return v != 0 and math.isfinite(v) and abs(v) <= NOISE_RTOL and significant_digits(v) >= NOISY_DIGITS


def _shown(s: Fraction) -> str:
    if s.denominator == 1:
        return str(s.numerator)
    if s.denominator <= MAX_DENOMINATOR and len(str(s)) < len(f"{float(s)!r}"):
        return f"{s.numerator}/{s.denominator}"
    return repr(float(s))


def _literal_text(f: float) -> str:
    return str(int(f)) if f.is_integer() and abs(f) < 2**53 else repr(f)


@dataclasses.dataclass(frozen=True)
class Noise:
    """A noisy literal of an expression's text: where it is, what the print pass writes instead
    (``"0"`` for round-off of zero, after which the text is reprinted) and why."""

    start: int
    end: int
    literal: str
    replacement: str
    why: str

    @property
    def zero(self) -> bool:
        return self.replacement == "0"


def _moves(text: str, candidates: list[re.Match[str]], params: tuple[str, ...], sampler: Any) -> list[bool]:
    """Whether writing 0 for each candidate literal moves the expression by at most
    :data:`ZERO_MOVE` of its term scale (the largest of its own and its additive terms' magnitudes)
    on ``sampler``'s points; ``False`` where that cannot be measured (a reaction term of ``u``)."""
    from casekit.errors import CasekitError
    from casekit.expr import as_expr

    try:
        e = as_expr(text, params=list(params))
        scale = max([sampler.magnitude(e), *(sampler.magnitude(a) for a in sp.Add.make_args(e))])
    except (CasekitError, ValueError, TypeError):
        return [False] * len(candidates)
    if not (math.isfinite(scale) and scale > 0):
        return [False] * len(candidates)
    out = []
    for m in candidates:
        try:
            moved = as_expr(text[:m.start()] + "0" + text[m.end():], params=list(params)) - e
            move = sampler.magnitude(moved)
        except (CasekitError, ValueError, TypeError):
            move = math.inf
        out.append(math.isfinite(move) and move <= ZERO_MOVE * scale)
    return out


def text_noise(text: str, params: tuple[str, ...] = (), sampler: Any = None) -> list[Noise]:
    """The noisy literals of expression text, as the agent reads them: a literal within
    :data:`MAX_ULPS` ulps of the double of a short value (:func:`printed_short`), and, with a
    ``sampler`` (``casekit.expr.hygiene.Sampler``), a literal that is round-off of zero
    (:func:`_zero_suspect`) whose removal moves the expression by at most :data:`ZERO_MOVE` of its
    term scale.  ``params`` names the symbols beyond the coordinates (``u`` of a reaction term).
    The print pass (:func:`snap_text`) and the validator's ``float_noise`` check both use it, so
    what derivation prints is never flagged."""
    found: list[Noise] = []
    zeros: list[re.Match[str]] = []
    for m in _NUMBER.finditer(text):
        literal = m.group()
        if "." not in literal and "e" not in literal.lower():
            continue  # an integer is exact
        v = float(literal)
        f = printed_short(v)
        if f is not None:
            s = short_value(v)
            assert s is not None
            found.append(Noise(m.start(), m.end(), literal, _literal_text(f),
                               f"the literal {literal} is float noise of {_shown(s)}"))
        elif sampler is not None and _zero_suspect(v):
            zeros.append(m)
    if zeros:
        for m, negligible in zip(zeros, _moves(text, zeros, params, sampler), strict=True):
            if negligible:
                found.append(Noise(m.start(), m.end(), m.group(), "0", f"the literal {m.group()} is round-off of zero"))
    return sorted(found, key=lambda n: n.start)


def _suspect(text: str) -> bool:
    """Whether ``text`` has a literal that may be noise (a long mantissa or an exponent)."""
    return any("e" in m.lower() or significant_digits(float(m)) >= NOISY_DIGITS
               for m in _NUMBER.findall(text) if "." in m or "e" in m.lower())


def snap_text(text: str, e: sp.Basic | None = None, sampler: Any = None) -> str:
    """Expression text (as :func:`casekit.expr.to_text` prints it) with each noisy literal
    (:func:`text_noise`) written as its short value, in place (nothing else of the text changes,
    and no literal moves by more than :data:`MAX_ULPS` ulps), and, with a ``sampler``, each
    literal that is round-off of zero dropped with its term (the text reprinted; the expression
    moves by at most :data:`ZERO_MOVE` of its term scale per literal); repeated until none is
    left.  ``text`` itself when it has none.  ``e`` (the printed expression) names the symbols
    beyond the coordinates (the unknown of a reaction term)."""
    if not _suspect(text):
        return text
    params = tuple(sorted({s.name for s in (e.free_symbols if isinstance(e, sp.Basic) else ())}
                          - {"x", "y", "z", "t"}))
    for _ in range(ROUNDS):
        found = text_noise(text, params, sampler)
        if not found:
            break
        out = text
        for n in reversed(found):
            out = out[:n.start] + n.replacement + out[n.end:]
        if any(n.zero for n in found):
            from casekit.expr import as_expr, to_text

            out = to_text(as_expr(out, params=list(params)))
        text = out
    return text


# --------------------------------------------------------------------------- the validator's side
def is_noise(v: float) -> str | None:
    """Why the number ``v`` (a JSON number of a case_spec, or prose) is float noise, ``None`` when it
    is not: a long literal within :data:`NOISE_RTOL` of a short value it is not the nearest double
    of.  Derivation snaps such numbers where it reads them (:func:`snap_number`); expressions are
    judged as printed, by :func:`text_noise`."""
    v = float(v)
    s = short_value(v)
    if s is not None and float(s) != v:
        return f"the literal {v!r} is float noise of {_shown(s)}"
    return None


__all__ = ["MAX_DENOMINATOR", "MAX_ULPS", "NOISE_RTOL", "NOISY_DIGITS", "SHORT_DIGITS", "ZERO_MOVE", "Noise",
           "is_noise", "printed_short", "short_value", "significant_digits", "snap_carrier", "snap_coordinate",
           "snap_expr", "snap_float", "snap_number", "snap_text", "text_noise"]
