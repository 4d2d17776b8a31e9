"""Accurate integrals and maxima over the exact geometry of a domain (no mesh).

* boundary integrals: composite Gauss-Legendre along each segment's parametrisation
  (:meth:`trace`), with the exact outward normal (the right-hand normal of a loop that keeps
  the domain on its left); on a box, tensor Gauss-Legendre over the tagged face with its
  outward axis normal;
* 2-D domain integrals: Green's theorem, ``int_D f dA = oint F n_x ds`` with
  ``F(x, y) = int_{x0}^x f(s, y) ds`` computed by Gauss-Legendre too, so curved boundaries are
  integrated exactly and the only error is that of smooth 1-D quadrature;
* 3-D boxes: tensor Gauss-Legendre;
* maxima: a dense sample of the closed domain, polished by local searches inside and along
  the boundary parametrisations.

Every integral is computed at two resolutions and must agree to ``RTOL`` (else an error says
so): the value is accurate to about that, which the tests check against closed forms.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from casekit.domains import Domain
from casekit.domains.geometry import Box

#: agreement required between the two resolutions of an integral
RTOL = 1e-11
_NODES = 16
#: most points one resolution of a domain integral evaluates: the panels stop doubling before it
#: (a displacement magnitude's kink never converges; doubling to 512 panels per piece asked for 67
#: million points per boundary piece and 23 GB)
MAX_POINTS = 5_000_000
#: relative round-off of a quadrature sum: changes below it times the sum of |terms| are noise
ROUNDOFF = 1e-15

PointFn = Callable[[np.ndarray], np.ndarray]
#: f(points (N, 2), outward unit normals (N, 2)) -> (N,)
BoundaryFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


class QuadratureError(ValueError):
    pass


def _gauss(panels: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes and weights on [0, 1]."""
    x, w = np.polynomial.legendre.leggauss(_NODES)
    x, w = 0.5 * (x + 1.0), 0.5 * w
    starts = np.arange(panels) / panels
    nodes = (starts[:, None] + x[None, :] / panels).ravel()
    weights = np.tile(w / panels, panels)
    return nodes, weights


def _converged(compute: Callable[[int], tuple[float, float]], what: str, panels: int = 8, most: int = 512,
               rtol: float = RTOL) -> float:
    """``compute(panels)`` gives (integral, integral of the absolute integrand); the integral is
    accepted when doubling the panels changes it by at most ``rtol`` of itself (or of a millionth
    of the absolute integral, for a value that cancels to nearly zero; never less than the
    round-off of the sum)."""
    coarse, _ = compute(panels)
    while panels < most:
        panels *= 2
        fine, size = compute(panels)
        # a change within the round-off of summing terms of that size is no change (a value that
        # cancels to zero otherwise waited for digits double precision does not have)
        if abs(fine - coarse) <= max(rtol * max(abs(fine), 1e-6 * size), ROUNDOFF * size):
            return fine
        change, coarse = abs(fine - coarse), fine
    raise QuadratureError(f"the {what} did not converge to a relative {rtol:g} with {most} panels per piece "
                          f"(last change {change:.2e} of {abs(coarse):.3e})")


def boundary_integral(domain: Domain, tag: str, f: BoundaryFn, rtol: float = RTOL) -> float:
    """int over the boundary part ``tag`` of f(x, n) ds, to a relative ``rtol``."""
    geometry = domain.geometry
    if isinstance(geometry, Box):
        return _face_integral(domain, geometry, tag, f, rtol)
    pieces = [p.segment for p in geometry.pieces() if p.tag == tag]
    if not pieces:
        raise QuadratureError(f"domain {domain.name!r} has no boundary part {tag!r}")

    def compute(panels: int) -> tuple[float, float]:
        s, w = _gauss(panels)
        total = size = 0.0
        for seg in pieces:
            pts, d = seg.trace(s)
            speed = np.hypot(d[:, 0], d[:, 1])
            normals = np.column_stack([d[:, 1], -d[:, 0]]) / speed[:, None]
            terms = w * speed * f(pts, normals)
            total, size = total + float(np.sum(terms)), size + float(np.sum(np.abs(terms)))
        return total, size

    return _converged(compute, f"boundary integral over {tag!r}", rtol=rtol)


def _face_integral(domain: Domain, box: Box, tag: str, f: BoundaryFn, rtol: float) -> float:
    """int over the face ``tag`` of a box of f(x, n) dA: tensor Gauss-Legendre on the face,
    n the face's outward axis normal."""
    if tag not in box.tags():
        raise QuadratureError(f"domain {domain.name!r} has no boundary part {tag!r}")
    axis, side = box.face(tag)
    others = [i for i in range(3) if i != axis]
    lo, hi = np.asarray(box.lo, dtype=float), np.asarray(box.hi, dtype=float)
    normal = np.zeros(3)
    normal[axis] = 1.0 if side else -1.0
    area = float(np.prod(hi[others] - lo[others]))

    def compute(panels: int) -> tuple[float, float]:
        s, w = _gauss(panels)
        a, b = np.meshgrid(s, s, indexing="ij")
        pts = np.empty((a.size, 3))
        pts[:, axis] = hi[axis] if side else lo[axis]
        for i, t in zip(others, (a.ravel(), b.ravel()), strict=True):
            pts[:, i] = lo[i] + (hi[i] - lo[i]) * t
        terms = area * np.outer(w, w).ravel() * f(pts, np.broadcast_to(normal, pts.shape))
        return float(np.sum(terms)), float(np.sum(np.abs(terms)))

    return _converged(compute, f"boundary integral over {tag!r}", panels=2,
                      most=_most(lambda p: (_NODES * p) ** 2), rtol=rtol)


def domain_integral(domain: Domain, f: PointFn, rtol: float = RTOL) -> float:
    """int over the domain of f dV, to a relative ``rtol``."""
    geometry = domain.geometry
    if isinstance(geometry, Box):
        def box(panels: int) -> tuple[float, float]:
            s, w = _gauss(panels)
            axes = [lo + (hi - lo) * s for lo, hi in zip(geometry.lo, geometry.hi, strict=True)]
            grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
            weights = np.einsum("i,j,k->ijk", w, w, w).ravel()
            volume = float(np.prod(np.subtract(geometry.hi, geometry.lo)))
            terms = volume * weights * f(grid)
            return float(np.sum(terms)), float(np.sum(np.abs(terms)))

        return _converged(box, "volume integral", panels=2, most=_most(lambda p: (_NODES * p) ** 3), rtol=rtol)
    x0 = geometry.bbox()[0]
    segments = [p.segment for p in geometry.pieces()]

    def compute(panels: int) -> tuple[float, float]:
        s, w = _gauss(panels)
        tau, tw = _gauss(max(4, panels))
        total = size = 0.0
        for seg in segments:
            pts, d = seg.trace(s)
            width = pts[:, 0] - x0
            # F(x, y) = int_{x0}^{x} f(xi, y) dxi on every boundary node at once
            xi = x0 + width[:, None] * tau[None, :]
            inner = np.column_stack([xi.ravel(), np.repeat(pts[:, 1], len(tau))])
            values = f(inner).reshape(len(s), len(tau))
            F = width * (values @ tw)
            total += float(np.sum(w * F * d[:, 1]))
            size += float(np.sum(w * np.abs(width * (np.abs(values) @ tw) * d[:, 1])))
        return total, size

    return _converged(compute, "domain integral (Green's theorem on the boundary)", rtol=rtol,
                      most=_most(lambda p: len(segments) * _NODES**2 * p * max(4, p)))


def _most(points: Callable[[int], int]) -> int:
    """The largest power-of-two panel count whose resolution evaluates at most MAX_POINTS points."""
    panels = 2
    while points(2 * panels) <= MAX_POINTS:
        panels *= 2
    return panels


@dataclass(frozen=True)
class Extremum:
    value: float
    point: tuple[float, ...]
    #: distance of the point from the boundary
    depth: float


def maximum(domain: Domain, f: PointFn, samples: int = 240) -> Extremum:
    """The maximum of f over the closed domain, with where it is."""
    from scipy.optimize import minimize, minimize_scalar

    geometry = domain.geometry
    b = domain.bbox()
    dim = domain.dim
    n = samples if dim == 2 else 48
    axes = [np.linspace(b[2 * i], b[2 * i + 1], n) for i in range(dim)]
    pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, dim)
    pts = pts[domain.inside(pts)]
    values = f(pts)
    candidates: list[tuple[float, np.ndarray]] = []
    for i in np.argsort(values)[::-1][:5]:
        start = pts[i]

        def neg(p: np.ndarray) -> float:
            q = p[None, :]
            return float(-f(q)[0]) if domain.inside(q, tol=0.0)[0] else 1e30  # outside: never chosen

        res = minimize(neg, start, method="Nelder-Mead",
                       options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 4000})
        best = res.x if res.fun <= -values[i] else start
        candidates.append((float(f(best[None, :])[0]), best))
    if not isinstance(geometry, Box):
        for seg in (p.segment for p in geometry.pieces()):
            s = np.linspace(0.0, 1.0, 400)
            on, _ = seg.trace(s)
            v = f(on)
            j = int(np.argmax(v))
            lo, hi = s[max(j - 1, 0)], s[min(j + 1, len(s) - 1)]

            def along(t: float, seg: object = seg) -> float:
                return float(-f(seg.trace(np.array([t]))[0])[0])  # type: ignore[attr-defined]

            r = minimize_scalar(along, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13})
            q = seg.trace(np.array([r.x]))[0][0]
            candidates.append((float(-r.fun), q))
    value, point = max(candidates, key=lambda c: c[0])
    depth = float(geometry.distance(np.asarray(point)[None, :])[0])
    return Extremum(value, tuple(float(c) for c in point), depth)
