"""A closed-form function that vanishes on a domain's boundary: the product of the level sets of
the boundary's carriers (lines, planes, circles, ellipses), scaled to at most 1 inside.

Manufactured solutions carry a part ``level_set * g``: the boundary data say nothing about it, so
no fit of visible fields to the boundary data recovers it (``casekit.authoring.catalogue.bubble``).
The product also vanishes where an extended carrier crosses the interior (the re-entrant lines of
an L-shape): that is harmless, the part is still invisible on the boundary.
"""

from __future__ import annotations

from collections.abc import Iterable

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
    inside the domain (rounded to 3 digits) and signed to be positive at the deepest sample.
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
            f = _clean(carrier.level_set())
            key = next((k for k in (sp.expand(f), sp.expand(-f)) if k in factors), sp.expand(f))
            power = 2 if tag in flat else 1
            factors[key] = (factors[key][0], max(power, factors[key][1])) if key in factors else (f, power)
    if not factors:
        return sp.Integer(1)
    product = sp.Mul(*(f**k for f, k in _within_degree(list(factors.values()), domain.dim)))
    points = interior_samples(domain)
    values = np.asarray(to_numpy(product, domain.dim)(points, 0.0), dtype=float) * np.ones(len(points))
    deepest = int(np.argmax(geometry.distance(points)))
    scale = float(np.max(np.abs(values)))
    if not np.isfinite(scale) or scale == 0.0:
        raise ValueError(f"the boundary level set of {domain.name!r} vanishes inside the domain")
    sign = 1 if values[deepest] >= 0 else -1
    return _short(sign / scale) * product


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


def _short(v: float) -> sp.Expr:
    r = float(f"{v:.3g}")
    return sp.Rational(repr(r))


def interior_samples(domain: Domain) -> np.ndarray:
    b = domain.bbox()
    axes = [np.linspace(b[2 * i], b[2 * i + 1], SAMPLES) for i in range(domain.dim)]
    points = np.column_stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")])
    return points[domain.inside(points)]

