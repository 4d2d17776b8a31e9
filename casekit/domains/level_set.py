"""A closed-form function that vanishes on a domain's boundary: the product of the level sets of
the boundary's carriers (lines, planes, circles, ellipses), scaled to about 1 inside (a power of two).

Manufactured solutions carry a part ``level_set * g``: the boundary data say nothing about it, so
no fit of visible fields to the boundary data recovers it (``casekit.authoring.catalogue.bubble``).
The product also vanishes where an extended carrier crosses the interior (the re-entrant lines of
an L-shape): that is harmless, the part is still invisible on the boundary.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from casekit.domains.template import Domain
from casekit.expr import COORDS, to_numpy

#: sample points per axis where the scale is measured
SAMPLES = 41
#: the largest total degree of the product: beyond, its derivatives expanded do not fit an
#: expression an agent can be asked to transcribe (a gear's 18 carriers: degree 20, a 30000-character
#: forcing after 200 s of expansion).  Curved carriers are kept first, then lines in boundary order.
MAX_DEGREE = 10


def boundary_level_set(domain: Domain, skip: Iterable[str] = (), flat: Iterable[str] = ()) -> sp.Expr:
    """The product of the level sets of every carrier of the boundary parts not in ``skip``
    (e.g. periodic pairs, whose sides must not pin the solution), divided by its largest magnitude
    inside the domain (to the nearest power of two) and signed to be positive at the deepest sample.
    The carriers of ``flat`` parts enter squared: there the function *and its normal derivative*
    vanish (parts with flux data: a fit to Neumann or Robin data sees a simple zero's slope).
    On outlines of more than :data:`MAX_DEGREE` (the gear) it vanishes on part of the boundary only:
    :func:`covers` says whether it vanishes on all of it."""
    geometry = domain.geometry
    skip, flat = set(skip), set(flat)
    factors: dict[sp.Expr, tuple[sp.Expr, int]] = {}  # one per carrier, whichever way its normal points
    for tag in geometry.tags():
        if tag in skip:
            continue
        for carrier in geometry.carriers(tag):
            f = _clean(_rational_line(carrier) or carrier.level_set())
            key = next((k for k in (sp.expand(f), sp.expand(-f)) if k in factors), sp.expand(f))
            power = 2 if tag in flat else 1
            factors[key] = (factors[key][0], max(power, factors[key][1])) if key in factors else (f, power)
    if not factors:
        return sp.Integer(1)
    return _scaled(domain, sp.Mul(*(f**k for f, k in _within_degree(list(factors.values()), domain.dim))))


@dataclass(frozen=True)
class EndCondition:
    """``value * f + slope * df/dn = 0`` on a boundary part (n its outward normal): ``(1, 0)`` a
    zero (Dirichlet data), ``(0, 1)`` a zero slope (Neumann data), ``(alpha, kappa)`` a zero Robin
    combination ``kappa df/dn + alpha f`` (Robin data with a constant flux coefficient)."""

    value: sp.Expr
    slope: sp.Expr


ZERO = EndCondition(sp.Integer(1), sp.Integer(0))
FLAT = EndCondition(sp.Integer(0), sp.Integer(1))
#: the highest degree of one axis' factor: two end conditions need at most degree 2, four
#: (value and slope at both ends) degree 4
MAX_AXIS_DEGREE = 4


def box_level_set(domain: Domain,
                  conditions: Mapping[str, Sequence[tuple[EndCondition, ...]]]) -> sp.Expr | None:
    """On an axis-aligned box (every part a whole face of the bounding box), a product of one
    polynomial per axis, each of the lowest degree that meets the conditions of its two faces
    (parts not in ``conditions`` impose none: periodic pairs), scaled like
    :func:`boundary_level_set`; None on any other domain.  A part may offer alternatives (a Robin
    combination, or a zero value and slope): per axis the one whose cube has the fewest terms is
    taken (the size of a cubic reaction's forcing is the product of those counts).

    Per axis the conditions are few, so the degree is low where :func:`boundary_level_set` squares
    a factor for every flux part: a zero slope needs no zero (``s (2 - s)`` under Dirichlet data
    on one face and Neumann data on the other, 1 between two Neumann faces), a Robin combination
    one condition instead of two.  The caller checks that the bubble it builds is invisible in the
    data (the flux of a vector field's bubble involves tangential slopes: not a per-axis matter)."""
    ends = _box_faces(domain)
    if ends is None:
        return None
    b = domain.bbox()
    factors = []
    for axis in range(domain.dim):
        lo, hi = float(b[2 * axis]), float(b[2 * axis + 1])
        faces = [(side, conditions.get(tag) or [()]) for tag, (a, side) in ends.items() if a == axis]
        candidates = []
        for choice in itertools.product(*(options for _, options in faces)):
            rows = [(side, c) for (side, _), chosen in zip(faces, choice, strict=True) for c in chosen]
            q = _axis_factor(COORDS[axis], lo, hi, rows)
            if q is not None:
                candidates.append((len(sp.Add.make_args(sp.expand(q**3))), degree(q, domain.dim), q))
        if not candidates:
            return None
        factors.append(min(candidates, key=lambda c: c[:2])[2])
    return _scaled(domain, sp.Mul(*factors))


def _box_faces(domain: Domain) -> dict[str, tuple[int, int]] | None:
    """tag -> (axis, side) when every part is one whole face of the bounding box, else None."""
    from casekit.domains.geometry.carriers import LineCarrier

    geometry, b = domain.geometry, domain.bbox()
    out: dict[str, tuple[int, int]] = {}
    for tag in geometry.tags():
        carriers = geometry.carriers(tag)
        if len(carriers) != 1 or not isinstance(carriers[0], LineCarrier):
            return None
        n = carriers[0].normal
        axes = [i for i, v in enumerate(n) if abs(abs(v) - 1.0) < 1e-12]
        if len(axes) != 1:
            return None
        axis, side = axes[0], int(n[axes[0]] > 0)
        if abs(carriers[0].point[axis] - b[2 * axis + side]) > 1e-12:
            return None
        out[tag] = (axis, side)
    if sorted(out.values()) != [(a, s) for a in range(domain.dim) for s in (0, 1)]:
        return None  # a face split into parts, or one missing
    inner = [np.linspace(b[2 * i], b[2 * i + 1], 9)[1:-1] for i in range(domain.dim)]
    grid = np.column_stack([g.ravel() for g in np.meshgrid(*inner, indexing="ij")])
    return out if bool(np.all(domain.inside(grid))) else None


def _axis_factor(s: sp.Symbol, lo: float, hi: float, rows: list[tuple[int, EndCondition]]) -> sp.Expr | None:
    """The lowest-degree nonzero polynomial in ``s`` on [lo, hi] meeting every (side, condition)."""
    a, b = _clean(sp.Float(lo)), _clean(sp.Float(hi))
    for deg in range(MAX_AXIS_DEGREE + 1):
        coeffs = sp.symbols(f"c0:{deg + 1}")
        q = sum(c * s**k for k, c in enumerate(coeffs))
        eqs = []
        for side, c in rows:
            end, outward = (b, 1) if side else (a, -1)
            eqs.append(sp.expand(c.value * q.subs(s, end) + c.slope * outward * sp.diff(q, s).subs(s, end)))
        if not eqs:
            return sp.Integer(1)
        # rational=True: exact rationals stay as they are (plain nsimplify re-approximates them,
        # -1409/1394 into -21135/697 over 30, or into radicals)
        m = sp.Matrix([[sp.nsimplify(e.coeff(c), rational=True) for c in coeffs] for e in eqs])
        null = m.nullspace()
        if null:
            v = null[0]
            # integer coefficients: with a power-of-two scale every printed coefficient is exact
            v = v * sp.ilcm(1, *(sp.fraction(sp.together(w))[1] for w in v))
            v = v / sp.igcd(0, *(int(w) for w in v))
            return sp.factor(sum(v[k] * s**k for k in range(deg + 1)))
    return None


def _scaled(domain: Domain, product: sp.Expr) -> sp.Expr:
    """``product`` divided by its largest magnitude inside the domain (to the nearest power of two),
    positive at the deepest sample."""
    points = interior_samples(domain)
    values = np.asarray(to_numpy(product, domain.dim)(points, 0.0), dtype=float) * np.ones(len(points))
    deepest = int(np.argmax(domain.geometry.distance(points)))
    scale = float(np.max(np.abs(values)))
    if not np.isfinite(scale) or scale == 0.0:
        raise ValueError(f"the boundary level set of {domain.name!r} vanishes inside the domain")
    sign = 1 if values[deepest] >= 0 else -1
    return sign * _power_of_two(1 / scale) * product


def covers(domain: Domain, skip: Iterable[str] = ()) -> bool:
    """Whether :func:`boundary_level_set` vanishes on every boundary part not in ``skip``."""
    phi = boundary_level_set(domain, skip)
    f = to_numpy(phi, domain.dim)
    skip = set(skip)
    for tag in domain.geometry.tags():
        if tag in skip:
            continue
        points = domain.geometry.tag_points(tag)
        if np.max(np.abs(np.asarray(f(points, 0.0), dtype=float) * np.ones(len(points)))) > 1e-9:
            return False
    return True


def degree(phi: sp.Expr, dim: int) -> int:
    """The total degree of a polynomial level set in the coordinates."""
    return int(sp.Poly(phi, *COORDS[:dim]).total_degree())


def _within_degree(factors: list[tuple[sp.Expr, int]], dim: int) -> list[tuple[sp.Expr, int]]:
    def weight(f: sp.Expr, power: int) -> int:
        return power * degree(f, dim)

    kept: list[tuple[sp.Expr, int]] = []
    total = 0
    for f, k in sorted(factors, key=lambda fk: -weight(*fk)):  # stable: lines keep their boundary order
        if total + weight(f, k) <= MAX_DEGREE:
            kept.append((f, k))
            total += weight(f, k)
    return kept


def _rational_line(carrier: object) -> sp.Expr | None:
    """A slanted line of rational slope through a point of short decimal coordinates (an edge of a
    polygon given by such vertices) as ``a (x - px) + b (y - py)`` with coprime integers (a, b)
    along its normal: exact, where the unit normal's float components (0.6 computed as
    0.5999999999999996) leave round-off that fails the exact residual check.  None for anything
    else (axis-aligned lines are exact already, irrational slopes stay floats)."""
    from fractions import Fraction

    from casekit.domains.geometry.carriers import LineCarrier, num

    if not isinstance(carrier, LineCarrier) or len(carrier.normal) != 2:
        return None
    (nx, ny), (px, py) = carrier.normal, carrier.point
    if min(abs(nx), abs(ny)) < 1e-12:
        return None
    slope = Fraction(nx / ny).limit_denominator(10**4)
    if abs(float(slope) - nx / ny) > 1e-12 * max(1.0, abs(nx / ny)):
        return None
    x0, y0 = num(px), num(py)
    if not (x0.is_Rational and y0.is_Rational):
        return None
    sign = 1 if ny > 0 else -1
    x, y = COORDS[:2]
    return sign * (slope.numerator * (x - x0) + slope.denominator * (y - y0))


def _clean(e: sp.Expr) -> sp.Expr:
    """Round-off in a carrier's coefficients (a normal's 6e-17 component) dropped, short decimals
    exact (a float in the solution leaves round-off in the PDE residual)."""
    out = {}
    for a in e.atoms(sp.Float):
        if abs(a) < 1e-12:
            out[a] = sp.Integer(0)
        elif len(repr(float(a)).replace("-", "").replace(".", "").strip("0")) <= 6:  # 0.6: exactly 3/5
            out[a] = sp.Rational(repr(float(a)))
    return e.xreplace(out)


def _power_of_two(v: float) -> sp.Expr:
    """The power of two nearest ``v`` (within a factor sqrt 2): a scale that adds no digits to the
    coefficients of the bubble's powers (a 3-digit scale cubed printed as a rounded float, and the
    rounding, amplified by the cancellation in an expanded product, failed the residual check)."""
    return sp.Integer(2) ** round(float(np.log2(v)))


def interior_samples(domain: Domain) -> np.ndarray:
    b = domain.bbox()
    axes = [np.linspace(b[2 * i], b[2 * i + 1], SAMPLES) for i in range(domain.dim)]
    points = np.column_stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")])
    return points[domain.inside(points)]

