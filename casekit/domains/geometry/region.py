"""2-D domains: a :class:`Region` is an outer :class:`Loop` and hole loops, each a closed chain of
tagged pieces (segments of ``casekit.domains.geometry.segments``).  Every loop runs with the
domain on its left (outer loops counter-clockwise, holes clockwise), so the outward normal of
every piece is its right-hand normal."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from casekit.domains.geometry.carriers import Carrier, Point, normals_at
from casekit.domains.geometry.segments import Arc, EllipticArc, Line, Monotone, Segment

#: Points closer than ``BOUNDARY_TOL * diameter`` to the boundary count as inside.
BOUNDARY_TOL = 1e-9


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

    def reversed(self) -> Loop:
        """The same curve run the other way (to turn an outline into a hole)."""
        return Loop(tuple(Piece(p.segment.reversed(), p.tag) for p in reversed(self.pieces)))


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

    def tag_points(self, tag: str, n: int = 40) -> np.ndarray:
        """Points on a tag, ``n - 2`` per piece, end points excluded (they belong to two parts)."""
        return np.concatenate([p.segment.sample(n)[1:-1] for p in self.tag_pieces(tag)])

    def tag_normals(self, tag: str, n: int = 40) -> np.ndarray:
        """The outward unit normals at :meth:`tag_points`."""
        out = []
        for p in self.tag_pieces(tag):
            pts = p.segment.sample(n)[1:-1]
            out.append(normals_at(p.segment.carrier(), pts))
        return np.concatenate(out)

    def carriers(self, tag: str) -> list[Carrier]:
        out: dict[tuple, Carrier] = {}
        for p in self.tag_pieces(tag):
            c = p.segment.carrier()
            out.setdefault(c.key(), c)
        return list(out.values())

    def curved(self) -> bool:
        """Whether any boundary piece is curved (then a quadratic geometry pays off)."""
        return any(p.segment.curved for p in self.pieces())

    def charts(self) -> list[dict]:
        """The distinct curves (conics) the curved pieces lie on, for tracks that curve cells."""
        out: dict[str, dict] = {}
        for p in self.pieces():
            chart = p.segment.chart()
            if chart is not None:
                out.setdefault(repr([round(v, 12) for k in sorted(chart) for v in chart[k]]), chart)
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

    def _monotone(self) -> list[Monotone]:
        """All loops as parts monotone in y, each ending exactly where the next one starts (so
        the half-open crossing rule cannot miss or double-count a junction)."""
        out = []
        for loop in self.loops:
            parts = [m for p in loop.pieces for m in p.segment.monotone()]
            for i, m in enumerate(parts):
                out.append(Monotone(m.start, parts[(i + 1) % len(parts)].start, m.x_at))
        return out

    def strictly_inside(self, points: np.ndarray) -> np.ndarray:
        """Crossing-number test of the open region (boundary points may go either way)."""
        pts = np.asarray(points, dtype=float)[:, :2]
        px, py = pts[:, 0], pts[:, 1]
        crossings = np.zeros(len(pts), dtype=np.int64)
        for m in self._monotone():
            (x0, y0), (x1, y1) = m.start, m.end
            if y0 == y1:
                continue
            hit = ((y0 <= py) & (py < y1)) | ((y1 <= py) & (py < y0))
            xi = x0 + (py - y0) * (x1 - x0) / (y1 - y0) if m.x_at is None else m.x_at(py)
            crossings += hit & (xi > px)
        return crossings % 2 == 1

    def inside(self, points: np.ndarray, tol: float | None = None) -> np.ndarray:
        """Closed-domain membership: strictly inside, or within ``tol`` of the boundary
        (default ``BOUNDARY_TOL`` times the diameter)."""
        tol = BOUNDARY_TOL * self.diameter() if tol is None else tol
        pts = np.asarray(points, dtype=float)
        return self.strictly_inside(pts) | (self.distance(pts) <= tol)


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


def ellipse(center: Point, semi_axes: Point, tags: str | tuple[str, str], *, hole: bool = False) -> Loop:
    """An axis-aligned ellipse; ``tags``: one tag, or (right half, left half) split on the
    vertical axis."""
    sweep = -2 * math.pi if hole else 2 * math.pi
    if isinstance(tags, str):
        return Loop((Piece(EllipticArc(center, semi_axes, 0.0, sweep), tags),))
    right, left = tags
    start = math.pi / 2 if hole else -math.pi / 2
    return Loop((Piece(EllipticArc(center, semi_axes, start, sweep / 2), right),
                 Piece(EllipticArc(center, semi_axes, start + sweep / 2, sweep / 2), left)))
