"""Carriers: the whole curve or surface a boundary piece lies on (line, plane, circle, ellipse).

Per boundary tag the families ask its carriers for a level-set function that vanishes on them,
the outward normal as a sympy expression, and -- for flat carriers -- the orthogonal projection
onto them (curved carriers have none: data on them are composed with a warp instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # sympy is imported where a level set or normal is built (derivation), never by
    import sympy as sp  # meshing or masking, which run inside every sandboxed calibration solve

Point = tuple[float, float]


def _coords(dim: int) -> tuple[sp.Symbol, ...]:
    from casekit.expr import X, Y, Z

    return (X, Y, Z)[:dim]


@dataclass(frozen=True)
class LineCarrier:
    """The infinite line (2-D) or plane (3-D) ``normal . (p - point) = 0``."""

    point: tuple[float, ...]
    normal: tuple[float, ...]  # unit, outward

    def level_set(self) -> sp.Expr:
        import sympy as sp

        coords = _coords(len(self.point))
        return sp.Add(*[num(n) * (c - num(p)) for n, c, p in zip(self.normal, coords, self.point, strict=True)])

    def normal_expr(self) -> tuple[sp.Expr, ...]:
        return tuple(num(n) for n in self.normal)

    def projection(self) -> dict[sp.Symbol, sp.Expr] | None:
        """Substitution that maps a point to its orthogonal projection on the carrier."""
        d = self.level_set()
        coords = _coords(len(self.point))
        return {c: c - num(n) * d for c, n in zip(coords, self.normal, strict=True)}

    def key(self) -> tuple:
        return ("line", rounded(self.point, self.normal), rounded(self.normal))

    def describe(self) -> str:
        n = self.normal
        axes = "xyz"
        for i, ni in enumerate(n):
            if abs(abs(ni) - 1.0) < 1e-12:
                return f"{axes[i]} = {fmt(self.point[i])}"
        return "the line through ({}) with normal ({})".format(
            ", ".join(fmt(v) for v in self.point), ", ".join(fmt(v) for v in n))


@dataclass(frozen=True)
class CircleCarrier:
    center: Point
    radius: float
    outward: int  # +1: the domain is inside the circle; -1: outside (a hole)

    def level_set(self) -> sp.Expr:
        X, Y = _coords(2)
        cx, cy = (num(v) for v in self.center)
        return ((X - cx) ** 2 + (Y - cy) ** 2 - num(self.radius) ** 2) / (2 * num(self.radius))

    def normal_expr(self) -> tuple[sp.Expr, ...]:
        X, Y = _coords(2)
        cx, cy = (num(v) for v in self.center)
        r = num(self.radius)
        return (self.outward * (X - cx) / r, self.outward * (Y - cy) / r)

    def projection(self) -> None:
        return None

    def key(self) -> tuple:
        return ("circle", rounded(self.center), round(self.radius, 12), self.outward)

    def describe(self) -> str:
        return f"the circle of radius {fmt(self.radius)} centred at ({fmt(self.center[0])}, {fmt(self.center[1])})"


@dataclass(frozen=True)
class EllipseCarrier:
    """The axis-aligned ellipse ((x - cx)/a)^2 + ((y - cy)/b)^2 = 1."""

    center: Point
    semi_axes: Point
    outward: int  # +1: the domain is inside; -1: outside (a hole)

    def level_set(self) -> sp.Expr:
        X, Y = _coords(2)
        (cx, cy), (a, b) = (tuple(num(v) for v in p) for p in (self.center, self.semi_axes))
        # scaled so that it grows like the distance to the curve near its ends on the x axis
        return ((X - cx) ** 2 / a**2 + (Y - cy) ** 2 / b**2 - 1) * a / 2

    def normal_expr(self) -> tuple[sp.Expr, ...]:
        import sympy as sp

        X, Y = _coords(2)
        (cx, cy), (a, b) = (tuple(num(v) for v in p) for p in (self.center, self.semi_axes))
        gx, gy = (X - cx) / a**2, (Y - cy) / b**2
        norm = sp.sqrt(gx**2 + gy**2)
        return (self.outward * gx / norm, self.outward * gy / norm)

    def projection(self) -> None:
        return None

    def key(self) -> tuple:
        return ("ellipse", rounded(self.center, self.semi_axes), self.outward)

    def describe(self) -> str:
        (cx, cy), (a, b) = self.center, self.semi_axes
        return (f"the ellipse centred at ({fmt(cx)}, {fmt(cy)}) with semi-axes {fmt(a)} along x and "
                f"{fmt(b)} along y")


Carrier = LineCarrier | CircleCarrier | EllipseCarrier


def normals_at(carrier: Carrier, pts: np.ndarray) -> np.ndarray:
    """The carrier's outward unit normals at points on it, shape (len(pts), dim)."""
    import sympy as sp

    coords = _coords(pts.shape[1])
    fn = sp.lambdify(coords, list(carrier.normal_expr()), "numpy")
    comps = np.broadcast_arrays(*fn(*pts.T), pts[:, 0])[:-1]
    return np.stack(comps, axis=1).astype(float)


def num(v: float) -> sp.Expr:
    """A float as a sympy number, exact when it is a short decimal or integer."""
    import sympy as sp

    if float(v).is_integer():
        return sp.Integer(int(v))
    r = sp.Rational(repr(float(v)))
    return r if len(str(r)) <= 12 else sp.Float(v)


def rounded(*vals: tuple[float, ...]) -> tuple:
    return tuple(round(float(x), 12) for v in vals for x in v)


def clean(v: float) -> float:
    """A value as printed for people: 12 decimals, integers without a point."""
    r = round(v, 12)
    return int(r) if float(r).is_integer() else r


def fmt(v: float) -> str:
    return f"{clean(v):g}"
