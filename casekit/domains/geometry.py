"""Exact geometry of domain templates: the one description used by meshing, masking and data.

A 2-D domain is a :class:`Region`: an outer :class:`Loop` and hole loops, each a closed chain
of tagged pieces (straight :class:`Line` s and circular :class:`Arc` s).  Every loop runs with
the domain on its left (outer loops counter-clockwise, holes clockwise), so the outward normal
of every piece is its right-hand normal.  The only 3-D shape is the axis-aligned :class:`Box`.

From this one description come: the gmsh model (``casekit.domains.meshing``), the exact
inside-test used to mask evaluation grids, the bounding box, the exact area, the distance to the
boundary, and per boundary tag its *carriers* (the lines, planes and circles it lies on), its
outward normal as a sympy expression when it has one, and a level-set function that vanishes
on it -- which the families use to derive leak-free boundary data.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from casekit.expr import X, Y, Z

Point = tuple[float, float]

#: Points closer than ``BOUNDARY_TOL * diameter`` to the boundary count as inside.
BOUNDARY_TOL = 1e-9


# --------------------------------------------------------------------------- carriers
@dataclass(frozen=True)
class LineCarrier:
    """The infinite line (2-D) or plane (3-D) ``normal . (p - point) = 0``."""

    point: tuple[float, ...]
    normal: tuple[float, ...]  # unit, outward

    def level_set(self) -> sp.Expr:
        coords = (X, Y, Z)[: len(self.point)]
        return sp.Add(*[_num(n) * (c - _num(p)) for n, c, p in zip(self.normal, coords, self.point, strict=True)])

    def normal_expr(self) -> tuple[sp.Expr, ...]:
        return tuple(_num(n) for n in self.normal)

    def projection(self) -> dict[sp.Symbol, sp.Expr]:
        """Substitution that maps a point to its orthogonal projection on the carrier."""
        d = self.level_set()
        coords = (X, Y, Z)[: len(self.point)]
        return {c: c - _num(n) * d for c, n in zip(coords, self.normal, strict=True)}

    def key(self) -> tuple:
        return ("line", _round(self.point, self.normal), _round(self.normal))

    def describe(self) -> str:
        n = self.normal
        axes = "xyz"
        for i, ni in enumerate(n):
            if abs(abs(ni) - 1.0) < 1e-12:
                return f"{axes[i]} = {_fmt(self.point[i])}"
        return "the line through ({}) with normal ({})".format(
            ", ".join(_fmt(v) for v in self.point), ", ".join(_fmt(v) for v in n))


@dataclass(frozen=True)
class CircleCarrier:
    center: Point
    radius: float
    outward: int  # +1: the domain is inside the circle; -1: outside (a hole)

    def level_set(self) -> sp.Expr:
        cx, cy = (_num(v) for v in self.center)
        return ((X - cx) ** 2 + (Y - cy) ** 2 - _num(self.radius) ** 2) / (2 * _num(self.radius))

    def normal_expr(self) -> tuple[sp.Expr, ...]:
        cx, cy = (_num(v) for v in self.center)
        r = _num(self.radius)
        return (self.outward * (X - cx) / r, self.outward * (Y - cy) / r)

    def key(self) -> tuple:
        return ("circle", _round(self.center), round(self.radius, 12), self.outward)

    def describe(self) -> str:
        return f"the circle of radius {_fmt(self.radius)} centred at ({_fmt(self.center[0])}, {_fmt(self.center[1])})"


Carrier = LineCarrier | CircleCarrier


# --------------------------------------------------------------------------- 2-D pieces
@dataclass(frozen=True)
class Line:
    a: Point
    b: Point

    @property
    def start(self) -> Point:
        return self.a

    @property
    def end(self) -> Point:
        return self.b

    def length(self) -> float:
        return math.dist(self.a, self.b)

    def carrier(self) -> LineCarrier:
        dx, dy = self.b[0] - self.a[0], self.b[1] - self.a[1]
        n = math.hypot(dx, dy)
        return LineCarrier(self.a, (dy / n, -dx / n))

    def green(self) -> float:
        """The piece's share of the area integral 1/2 \\oint (x dy - y dx)."""
        return 0.5 * (self.a[0] * self.b[1] - self.b[0] * self.a[1])

    def monotone(self) -> list[tuple[Point, Point, float | None, float]]:
        """(start, end, circle centre x or None, sign) pieces monotone in y, for ray casting."""
        return [(self.a, self.b, None, 0.0)]

    def distance(self, pts: np.ndarray) -> np.ndarray:
        a = np.asarray(self.a)
        d = np.asarray(self.b) - a
        s = np.clip(((pts - a) @ d) / (d @ d), 0.0, 1.0)
        return np.linalg.norm(pts - (a + s[:, None] * d), axis=1)

    def sample(self, n: int) -> np.ndarray:
        s = np.linspace(0.0, 1.0, n)
        return np.asarray(self.a) + s[:, None] * (np.asarray(self.b) - np.asarray(self.a))

    def extent(self) -> tuple[float, float, float, float]:
        xs, ys = (self.a[0], self.b[0]), (self.a[1], self.b[1])
        return min(xs), max(xs), min(ys), max(ys)


@dataclass(frozen=True)
class Arc:
    """The arc of the circle (center, radius) from angle ``start_angle`` through ``sweep``
    radians (positive: counter-clockwise)."""

    center: Point
    radius: float
    start_angle: float
    sweep: float

    def _at(self, theta: float) -> Point:
        return (self.center[0] + self.radius * math.cos(theta),
                self.center[1] + self.radius * math.sin(theta))

    @property
    def start(self) -> Point:
        return self._at(self.start_angle)

    @property
    def end(self) -> Point:
        return self._at(self.start_angle + self.sweep)

    def length(self) -> float:
        return abs(self.sweep) * self.radius

    def carrier(self) -> CircleCarrier:
        return CircleCarrier(self.center, self.radius, 1 if self.sweep > 0 else -1)

    def green(self) -> float:
        cx, cy = self.center
        r, t0, t1 = self.radius, self.start_angle, self.start_angle + self.sweep
        return 0.5 * (r * (cx * (math.sin(t1) - math.sin(t0)) - cy * (math.cos(t1) - math.cos(t0)))
                      + r * r * self.sweep)

    def _breaks(self) -> list[float]:
        """Angles splitting the arc where it turns in y (at pi/2 + k pi)."""
        t0, t1 = sorted((self.start_angle, self.start_angle + self.sweep))
        k0 = math.ceil((t0 - math.pi / 2) / math.pi)
        out = []
        k = k0
        while True:
            a = math.pi / 2 + k * math.pi
            if a >= t1:
                break
            if a > t0:
                out.append(a)
            k += 1
        return out if self.sweep > 0 else out[::-1]

    def monotone(self) -> list[tuple[Point, Point, float | None, float]]:
        angles = [self.start_angle, *self._breaks(), self.start_angle + self.sweep]
        out: list[tuple[Point, Point, float | None, float]] = []
        for t0, t1 in itertools.pairwise(angles):
            mid = 0.5 * (t0 + t1)
            out.append((self._at(t0), self._at(t1), self.center[0], math.copysign(1.0, math.cos(mid))))
        return out

    def _in_range(self, phi: np.ndarray) -> np.ndarray:
        if self.sweep > 0:
            rel = np.mod(phi - self.start_angle, 2 * np.pi)
        else:
            rel = np.mod(self.start_angle - phi, 2 * np.pi)
        return rel <= abs(self.sweep) + 1e-14

    def distance(self, pts: np.ndarray) -> np.ndarray:
        c = np.asarray(self.center)
        rel = pts - c
        rho = np.linalg.norm(rel, axis=1)
        phi = np.arctan2(rel[:, 1], rel[:, 0])
        ends = np.minimum(np.linalg.norm(pts - np.asarray(self.start), axis=1),
                          np.linalg.norm(pts - np.asarray(self.end), axis=1))
        return np.where(self._in_range(phi), np.abs(rho - self.radius), ends)

    def sample(self, n: int) -> np.ndarray:
        th = self.start_angle + np.linspace(0.0, 1.0, n) * self.sweep
        return np.column_stack([self.center[0] + self.radius * np.cos(th),
                                self.center[1] + self.radius * np.sin(th)])

    def extent(self) -> tuple[float, float, float, float]:
        pts = [self.start, self.end]
        for k in range(-8, 9):
            a = k * math.pi / 2
            if self._in_range(np.array([a]))[0]:
                pts.append(self._at(a))
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        return min(xs), max(xs), min(ys), max(ys)


Segment = Line | Arc


@dataclass(frozen=True)
class Piece:
    segment: Segment
    tag: str


@dataclass(frozen=True)
class Loop:
    pieces: tuple[Piece, ...]

    def __post_init__(self) -> None:
        scale = max(1.0, *(abs(c) for p in self.pieces for c in (*p.segment.start, *p.segment.end)))
        for p, q in zip(self.pieces, (*self.pieces[1:], self.pieces[0]), strict=True):
            if math.dist(p.segment.end, q.segment.start) > 1e-9 * scale:
                raise ValueError(f"loop is not closed between {p} and {q}")

    def signed_area(self) -> float:
        return sum(p.segment.green() for p in self.pieces)


@dataclass(frozen=True)
class PeriodicPair:
    """Points of ``target`` are points of ``source`` moved by ``translation``."""

    source: str
    target: str
    translation: tuple[float, ...]


@dataclass(frozen=True)
class Region:
    outer: Loop
    holes: tuple[Loop, ...] = ()
    periodic: tuple[PeriodicPair, ...] = ()
    #: corners where solutions are singular and meshes should be finer
    refine_points: tuple[Point, ...] = ()
    dim: int = field(default=2, init=False)

    def __post_init__(self) -> None:
        if self.outer.signed_area() <= 0:
            raise ValueError("the outer loop must run counter-clockwise")
        for h in self.holes:
            if h.signed_area() >= 0:
                raise ValueError("hole loops must run clockwise")

    # -- pieces and tags --------------------------------------------------------------
    @property
    def loops(self) -> tuple[Loop, ...]:
        return (self.outer, *self.holes)

    def pieces(self) -> list[Piece]:
        return [p for loop in self.loops for p in loop.pieces]

    def tags(self) -> list[str]:
        seen: dict[str, None] = {}
        for p in self.pieces():
            seen.setdefault(p.tag, None)
        return list(seen)

    def tag_pieces(self, tag: str) -> list[Piece]:
        return [p for p in self.pieces() if p.tag == tag]

    def carriers(self, tag: str) -> list[Carrier]:
        out: dict[tuple, Carrier] = {}
        for p in self.tag_pieces(tag):
            c = p.segment.carrier()
            out.setdefault(c.key(), c)
        return list(out.values())

    # -- measures -------------------------------------------------------------------
    def measure(self) -> float:
        return sum(loop.signed_area() for loop in self.loops)

    def bbox(self) -> tuple[float, ...]:
        ext = np.array([p.segment.extent() for p in self.outer.pieces])
        # to 12 decimals: round-off of trigonometric extents (-4.3e-16 for 0) must not reach the
        # agent-visible grid box or expressions built from it
        return tuple(round(float(v), 12) + 0.0 for v in (ext[:, 0].min(), ext[:, 1].max(), ext[:, 2].min(),
                                                         ext[:, 3].max()))

    def diameter(self) -> float:
        b = self.bbox()
        return math.hypot(b[1] - b[0], b[3] - b[2])

    def boundary_length(self, tag: str | None = None) -> float:
        return sum(p.segment.length() for p in self.pieces() if tag is None or p.tag == tag)

    # -- point tests ------------------------------------------------------------------
    def distance(self, points: np.ndarray) -> np.ndarray:
        pts = np.asarray(points, dtype=float)[:, :2]
        return np.min([p.segment.distance(pts) for p in self.pieces()], axis=0)

    def tag_distance(self, tag: str, points: np.ndarray) -> np.ndarray:
        pts = np.asarray(points, dtype=float)[:, :2]
        return np.min([p.segment.distance(pts) for p in self.tag_pieces(tag)], axis=0)

    def _monotone(self) -> list[tuple[Point, Point, Arc | None, float]]:
        """All loops as pieces monotone in y, each ending exactly where the next one starts (so
        the half-open crossing rule cannot miss or double-count a junction)."""
        out = []
        for loop in self.loops:
            parts = [(a, b, p.segment if isinstance(p.segment, Arc) else None, sign)
                     for p in loop.pieces for a, b, _, sign in p.segment.monotone()]
            for i, (a, _, arc, sign) in enumerate(parts):
                out.append((a, parts[(i + 1) % len(parts)][0], arc, sign))
        return out

    def strictly_inside(self, points: np.ndarray) -> np.ndarray:
        """Crossing-number test of the open region (boundary points may go either way)."""
        pts = np.asarray(points, dtype=float)[:, :2]
        px, py = pts[:, 0], pts[:, 1]
        crossings = np.zeros(len(pts), dtype=np.int64)
        for (x0, y0), (x1, y1), arc, sign in self._monotone():
            if y0 == y1:
                continue
            hit = ((y0 <= py) & (py < y1)) | ((y1 <= py) & (py < y0))
            if arc is None:
                xi = x0 + (py - y0) * (x1 - x0) / (y1 - y0)
            else:
                h = np.clip(arc.radius**2 - (py - arc.center[1]) ** 2, 0.0, None)
                xi = arc.center[0] + sign * np.sqrt(h)
            crossings += hit & (xi > px)
        return crossings % 2 == 1

    def inside(self, points: np.ndarray, tol: float | None = None) -> np.ndarray:
        """Closed-domain membership: strictly inside, or within ``tol`` of the boundary
        (default ``BOUNDARY_TOL`` times the diameter)."""
        tol = BOUNDARY_TOL * self.diameter() if tol is None else tol
        pts = np.asarray(points, dtype=float)
        return self.strictly_inside(pts) | (self.distance(pts) <= tol)


# --------------------------------------------------------------------------- 3-D box
_BOX_TAGS = ("left", "right", "front", "back", "bottom", "top")


@dataclass(frozen=True)
class Box:
    """The box [x0, x1] x [y0, y1] x [z0, z1]; faces tagged left/right (x), front/back (y),
    bottom/top (z)."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    periodic: tuple[PeriodicPair, ...] = ()
    refine_points: tuple[tuple[float, float, float], ...] = ()
    dim: int = field(default=3, init=False)

    def tags(self) -> list[str]:
        return list(_BOX_TAGS)

    def _face(self, tag: str) -> tuple[int, int]:
        """(axis, side) of a face: side 0 is the low face."""
        i = _BOX_TAGS.index(tag)
        return i // 2, i % 2

    def carriers(self, tag: str) -> list[Carrier]:
        axis, side = self._face(tag)
        point = tuple(self.hi[i] if (i == axis and side) else self.lo[i] for i in range(3))
        normal = tuple((1.0 if side else -1.0) if i == axis else 0.0 for i in range(3))
        return [LineCarrier(point, normal)]

    def measure(self) -> float:
        return float(np.prod(np.subtract(self.hi, self.lo)))

    def bbox(self) -> tuple[float, ...]:
        return (self.lo[0], self.hi[0], self.lo[1], self.hi[1], self.lo[2], self.hi[2])

    def diameter(self) -> float:
        return float(np.linalg.norm(np.subtract(self.hi, self.lo)))

    def boundary_length(self, tag: str | None = None) -> float:
        """Total face area (of one tag)."""
        ext = np.subtract(self.hi, self.lo)
        areas = {t: float(np.prod(np.delete(ext, self._face(t)[0]))) for t in _BOX_TAGS}
        return sum(a for t, a in areas.items() if tag is None or t == tag)

    def distance(self, points: np.ndarray) -> np.ndarray:
        pts = np.asarray(points, dtype=float)[:, :3]
        lo, hi = np.asarray(self.lo), np.asarray(self.hi)
        inside = np.all((pts >= lo) & (pts <= hi), axis=1)
        d_in = np.min(np.minimum(pts - lo, hi - pts), axis=1)
        d_out = np.linalg.norm(np.maximum(0.0, np.maximum(lo - pts, pts - hi)), axis=1)
        return np.where(inside, d_in, d_out)

    def tag_distance(self, tag: str, points: np.ndarray) -> np.ndarray:
        pts = np.asarray(points, dtype=float)[:, :3]
        axis, side = self._face(tag)
        plane = self.hi[axis] if side else self.lo[axis]
        lo, hi = np.array(self.lo, dtype=float), np.array(self.hi, dtype=float)
        lo[axis] = hi[axis] = plane
        return np.linalg.norm(np.maximum(0.0, np.maximum(lo - pts, pts - hi)), axis=1)

    def strictly_inside(self, points: np.ndarray) -> np.ndarray:
        pts = np.asarray(points, dtype=float)[:, :3]
        return np.all((pts > np.asarray(self.lo)) & (pts < np.asarray(self.hi)), axis=1)

    def inside(self, points: np.ndarray, tol: float | None = None) -> np.ndarray:
        tol = BOUNDARY_TOL * self.diameter() if tol is None else tol
        pts = np.asarray(points, dtype=float)[:, :3]
        return np.all((pts >= np.asarray(self.lo) - tol) & (pts <= np.asarray(self.hi) + tol), axis=1)


Geometry = Region | Box


# --------------------------------------------------------------------------- helpers
def polygon(vertices: list[Point], tags: list[str] | str) -> Loop:
    """A closed polygon loop; ``tags`` is one tag for all edges or one per edge
    (edge i runs from vertex i to vertex i+1)."""
    n = len(vertices)
    names = [tags] * n if isinstance(tags, str) else list(tags)
    if len(names) != n:
        raise ValueError("one tag per polygon edge")
    return Loop(tuple(Piece(Line(vertices[i], vertices[(i + 1) % n]), names[i]) for i in range(n)))


def circle(center: Point, radius: float, tag: str, *, hole: bool = False) -> Loop:
    sweep = -2 * math.pi if hole else 2 * math.pi
    return Loop((Piece(Arc(center, radius, 0.0, sweep), tag),))


def reversed_loop(loop: Loop) -> Loop:
    """The same curve run the other way (to turn an outline into a hole)."""
    out = []
    for p in reversed(loop.pieces):
        s = p.segment
        if isinstance(s, Line):
            out.append(Piece(Line(s.b, s.a), p.tag))
        else:
            out.append(Piece(Arc(s.center, s.radius, s.start_angle + s.sweep, -s.sweep), p.tag))
    return Loop(tuple(out))


def _num(v: float) -> sp.Expr:
    """A float as a sympy number, exact when it is a short decimal or integer."""
    if float(v).is_integer():
        return sp.Integer(int(v))
    r = sp.Rational(repr(float(v)))
    return r if len(str(r)) <= 12 else sp.Float(v)


def _round(*vals: tuple[float, ...]) -> tuple:
    return tuple(round(float(x), 12) for v in vals for x in v)


def _fmt(v: float) -> str:
    return f"{v:g}"
