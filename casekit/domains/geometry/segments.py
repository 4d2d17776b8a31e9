"""The pieces of 2-D boundary loops: straight :class:`Line` s, circular :class:`Arc` s and
axis-aligned :class:`EllipticArc` s.

A segment owns everything that depends on its shape: where it starts and ends, its length and
its share of the area, the carrier it lies on, distances to it and projection onto its exact
curve, its parts monotone in y (for the inside test), its gmsh calls, its description for people
and the chart a track needs to curve cells onto it.  Nothing outside this module switches on the
kind of a segment.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from casekit.domains.geometry.carriers import (
    Carrier,
    CircleCarrier,
    EllipseCarrier,
    LineCarrier,
    Point,
    fmt,
)
from casekit.domains.gmsh_script import H, Ref, Script

#: (x, y) -> gmsh point (one per distinct location)
PointMaker = Callable[[Point], Ref]


@dataclass(frozen=True)
class Monotone:
    """A part of a segment along which y is monotone; ``x_at(y)`` is its x at height y (None:
    the straight chord between its ends)."""

    start: Point
    end: Point
    x_at: Callable[[np.ndarray], np.ndarray] | None


class Segment(Protocol):
    curved: ClassVar[bool]
    #: plural noun for descriptions ("straight edges")
    kind: ClassVar[str]

    @property
    def start(self) -> Point: ...
    @property
    def end(self) -> Point: ...
    def length(self) -> float: ...
    def carrier(self) -> Carrier: ...
    def green(self) -> float: ...
    def monotone(self) -> list[Monotone]: ...
    def distance(self, pts: np.ndarray) -> np.ndarray: ...
    def project(self, pts: np.ndarray) -> np.ndarray: ...
    def sample(self, n: int) -> np.ndarray: ...
    def trace(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
    def extent(self) -> tuple[float, float, float, float]: ...
    def reversed(self) -> Segment: ...
    def describe(self) -> str: ...
    def chart(self) -> dict[str, Any] | None: ...
    def gmsh(self, script: Script, point: PointMaker, refine: bool) -> list[Ref]: ...


# --------------------------------------------------------------------------- lines
@dataclass(frozen=True)
class Line:
    a: Point
    b: Point

    curved: ClassVar[bool] = False
    kind: ClassVar[str] = "straight edges"

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

    def monotone(self) -> list[Monotone]:
        return [Monotone(self.a, self.b, None)]

    def distance(self, pts: np.ndarray) -> np.ndarray:
        a = np.asarray(self.a)
        d = np.asarray(self.b) - a
        s = np.clip(((pts - a) @ d) / (d @ d), 0.0, 1.0)
        return np.linalg.norm(pts - (a + s[:, None] * d), axis=1)

    def project(self, pts: np.ndarray) -> np.ndarray:
        a = np.asarray(self.a)
        d = np.asarray(self.b) - a
        return a + (((pts - a) @ d) / (d @ d))[:, None] * d

    def sample(self, n: int) -> np.ndarray:
        s = np.linspace(0.0, 1.0, n)
        return np.asarray(self.a) + s[:, None] * (np.asarray(self.b) - np.asarray(self.a))

    def trace(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Points and derivatives d/ds of the parametrisation over s in [0, 1] (start to end)."""
        a, d = np.asarray(self.a), np.asarray(self.b) - np.asarray(self.a)
        s = np.asarray(s, dtype=float)
        return a + s[:, None] * d, np.broadcast_to(d, (len(s), 2)).copy()

    def extent(self) -> tuple[float, float, float, float]:
        xs, ys = (self.a[0], self.b[0]), (self.a[1], self.b[1])
        return min(xs), max(xs), min(ys), max(ys)

    def reversed(self) -> Line:
        return Line(self.b, self.a)

    def describe(self) -> str:
        return f"the segment from ({fmt(self.a[0])}, {fmt(self.a[1])}) to ({fmt(self.b[0])}, {fmt(self.b[1])})"

    def chart(self) -> None:
        return None

    def gmsh(self, script: Script, point: PointMaker, refine: bool) -> list[Ref]:
        return [script.geo("addLine", point(self.a), point(self.b))]


# --------------------------------------------------------------------------- arcs of conics
class _ConicArc:
    """What circular and elliptic arcs share: the point at parameter t is
    ``center + (a cos t, b sin t)`` for t from ``start_angle`` through ``sweep`` (positive:
    counter-clockwise)."""

    center: Point
    semi_axes: Point
    start_angle: float
    sweep: float

    curved: ClassVar[bool] = True

    def length(self) -> float:
        raise NotImplementedError

    def at(self, t: float) -> Point:
        (cx, cy), (a, b) = self.center, self.semi_axes
        return (cx + a * math.cos(t), cy + b * math.sin(t))

    def _points(self, t: np.ndarray) -> np.ndarray:
        (cx, cy), (a, b) = self.center, self.semi_axes
        return np.column_stack([cx + a * np.cos(t), cy + b * np.sin(t)])

    @property
    def start(self) -> Point:
        return self.at(self.start_angle)

    @property
    def end(self) -> Point:
        return self.at(self.start_angle + self.sweep)

    def green(self) -> float:
        (cx, cy), (a, b) = self.center, self.semi_axes
        t0, t1 = self.start_angle, self.start_angle + self.sweep
        return 0.5 * (cx * b * (math.sin(t1) - math.sin(t0)) - cy * a * (math.cos(t1) - math.cos(t0))
                      + a * b * self.sweep)

    def _breaks(self) -> list[float]:
        """Parameters splitting the arc where it turns in y (at pi/2 + k pi)."""
        t0, t1 = sorted((self.start_angle, self.start_angle + self.sweep))
        out = []
        k = math.ceil((t0 - math.pi / 2) / math.pi)
        while (t := math.pi / 2 + k * math.pi) < t1:
            if t > t0:
                out.append(t)
            k += 1
        return out if self.sweep > 0 else out[::-1]

    def monotone(self) -> list[Monotone]:
        (cx, cy), (a, b) = self.center, self.semi_axes
        ts = [self.start_angle, *self._breaks(), self.start_angle + self.sweep]
        out = []
        for t0, t1 in itertools.pairwise(ts):
            sign = math.copysign(1.0, math.cos(0.5 * (t0 + t1)))

            def x_at(py: np.ndarray, sign: float = sign) -> np.ndarray:
                return cx + sign * a * np.sqrt(np.clip(1.0 - ((py - cy) / b) ** 2, 0.0, None))

            out.append(Monotone(self.at(t0), self.at(t1), x_at))
        return out

    def _in_range(self, t: np.ndarray) -> np.ndarray:
        rel = np.mod(t - self.start_angle, 2 * np.pi) if self.sweep > 0 else np.mod(self.start_angle - t, 2 * np.pi)
        return rel <= abs(self.sweep) + 1e-14

    def sample(self, n: int) -> np.ndarray:
        return self._points(self.start_angle + np.linspace(0.0, 1.0, n) * self.sweep)

    def trace(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Points and derivatives d/ds of the parametrisation over s in [0, 1] (start to end)."""
        t = self.start_angle + np.asarray(s, dtype=float) * self.sweep
        a, b = self.semi_axes
        return self._points(t), np.column_stack([-a * np.sin(t), b * np.cos(t)]) * self.sweep

    def extent(self) -> tuple[float, float, float, float]:
        pts = [self.start, self.end]
        for k in range(-8, 9):
            if self._in_range(np.array([k * math.pi / 2]))[0]:
                pts.append(self.at(k * math.pi / 2))
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        return min(xs), max(xs), min(ys), max(ys)

    def reversed(self) -> Any:
        return dataclasses.replace(self, start_angle=self.start_angle + self.sweep, sweep=-self.sweep)  # type: ignore[type-var]

    def chart(self) -> dict[str, Any]:
        """The conic the arc lies on, for tracks that curve cells onto it."""
        return {"center": [float(v) for v in self.center], "semi_axes": [float(v) for v in self.semi_axes]}

    def _pieces(self) -> int:
        """gmsh arcs must turn less than 180 degrees: pieces of at most 90."""
        return max(1, math.ceil(abs(self.sweep) / (math.pi / 2) - 1e-9))

    def gmsh(self, script: Script, point: PointMaker, refine: bool) -> list[Ref]:
        n = self._pieces()
        center = point(self.center)
        out = []
        for i in range(n):
            a = self.start if i == 0 else self.at(self.start_angle + self.sweep * i / n)
            b = self.end if i == n - 1 else self.at(self.start_angle + self.sweep * (i + 1) / n)
            c = self._gmsh_arc(script, point(a), center, point, point(b))
            if refine:
                # small curves get at least 16 nodes around (when h would give fewer)
                nodes = max(2, math.ceil(16 * abs(self.sweep) / (2 * math.pi) / n) + 1)
                script.model("model.mesh.setTransfiniteCurve", c, nodes, "Progression", 1.0,
                             when=self.length() / n / (nodes - 1) < H)
            out.append(c)
        return out

    def _gmsh_arc(self, script: Script, a: Ref, center: Ref, point: PointMaker, b: Ref) -> Ref:
        raise NotImplementedError

    def _range_text(self) -> str:
        # counter-clockwise from lo to hi, lo in (-180, 180] (an arc given clockwise is the same set)
        lo = math.degrees(min(self.start_angle, self.start_angle + self.sweep))
        lo = 180.0 - (180.0 - lo) % 360.0
        return f"between the angles {fmt(lo)} and {fmt(lo + math.degrees(abs(self.sweep)))} degrees"

    def _full(self) -> bool:
        return abs(abs(self.sweep) - 2 * math.pi) < 1e-12


@dataclass(frozen=True)
class Arc(_ConicArc):
    """The arc of the circle (center, radius) from angle ``start_angle`` through ``sweep``
    radians (positive: counter-clockwise)."""

    center: Point
    radius: float
    start_angle: float
    sweep: float

    kind: ClassVar[str] = "circular arcs"

    @property
    def semi_axes(self) -> Point:  # type: ignore[override]
        return (self.radius, self.radius)

    def length(self) -> float:
        return abs(self.sweep) * self.radius

    def carrier(self) -> CircleCarrier:
        return CircleCarrier(self.center, self.radius, 1 if self.sweep > 0 else -1)

    def distance(self, pts: np.ndarray) -> np.ndarray:
        rel = pts - np.asarray(self.center)
        rho = np.linalg.norm(rel, axis=1)
        phi = np.arctan2(rel[:, 1], rel[:, 0])
        ends = np.minimum(np.linalg.norm(pts - np.asarray(self.start), axis=1),
                          np.linalg.norm(pts - np.asarray(self.end), axis=1))
        return np.where(self._in_range(phi), np.abs(rho - self.radius), ends)

    def project(self, pts: np.ndarray) -> np.ndarray:
        c = np.asarray(self.center)
        rel = pts - c
        return c + self.radius * rel / np.linalg.norm(rel, axis=1)[:, None]

    def describe(self) -> str:
        circle = f"radius {fmt(self.radius)} centred at ({fmt(self.center[0])}, {fmt(self.center[1])})"
        if self._full():
            return f"the circle of {circle}"
        return f"the arc of the circle of {circle} {self._range_text()}"

    def _gmsh_arc(self, script: Script, a: Ref, center: Ref, point: PointMaker, b: Ref) -> Ref:
        return script.geo("addCircleArc", a, center, b)


#: Gauss-Legendre nodes and weights for arc lengths of ellipses
_GL = np.polynomial.legendre.leggauss(48)


@dataclass(frozen=True)
class EllipticArc(_ConicArc):
    """The arc of the axis-aligned ellipse (center, semi-axes a along x and b along y) at the
    parameters t from ``start_angle`` through ``sweep`` (the point ``center + (a cos t, b sin t)``;
    positive: counter-clockwise)."""

    center: Point
    semi_axes: Point
    start_angle: float
    sweep: float

    kind: ClassVar[str] = "elliptic arcs"

    def __post_init__(self) -> None:
        if min(self.semi_axes) <= 0:
            raise ValueError("the semi-axes of an ellipse must be positive")

    def length(self) -> float:
        """Gauss-Legendre between the axis crossings (the speed turns sharply there when the
        ellipse is flat)."""
        (a, b), (x, w) = self.semi_axes, _GL
        t0, t1 = sorted((self.start_angle, self.start_angle + self.sweep))
        cuts = [t0, *(k * math.pi / 2 for k in range(math.floor(t0 / (math.pi / 2)) + 1,
                                                     math.ceil(t1 / (math.pi / 2)))), t1]
        total = 0.0
        for lo, hi in itertools.pairwise(cuts):
            t = lo + 0.5 * (x + 1.0) * (hi - lo)
            total += 0.5 * (hi - lo) * float(np.sum(w * np.hypot(a * np.sin(t), b * np.cos(t))))
        return total

    def carrier(self) -> EllipseCarrier:
        return EllipseCarrier(self.center, self.semi_axes, 1 if self.sweep > 0 else -1)

    def _newton(self, pts: np.ndarray, t: np.ndarray, lo: float, hi: float) -> np.ndarray:
        """Parameters of the points of the ellipse nearest to ``pts``, from the guesses ``t``
        (stationary points of the distance, kept within [lo, hi])."""
        (cx, cy), (a, b) = self.center, self.semi_axes
        px, py = pts[:, 0] - cx, pts[:, 1] - cy
        for _ in range(30):
            c, s = np.cos(t), np.sin(t)
            ex, ey = a * c - px, b * s - py
            f = -ex * a * s + ey * b * c
            fp = (a * s) ** 2 + (b * c) ** 2 - ex * a * c - ey * b * s
            step = f / np.where(np.abs(fp) > 1e-300, fp, 1.0)
            step = np.clip(step, -0.25, 0.25)
            t = np.clip(t - step, lo, hi)
            if np.max(np.abs(step), initial=0.0) < 1e-15:
                break
        return t

    def distance(self, pts: np.ndarray) -> np.ndarray:
        lo, hi = sorted((self.start_angle, self.start_angle + self.sweep))
        guesses = np.linspace(lo, hi, 65)
        curve = self._points(guesses)
        out = np.empty(len(pts))
        for i in range(0, len(pts), 2048):
            block = pts[i:i + 2048]
            d2 = ((block[:, None, :] - curve[None, :, :]) ** 2).sum(axis=2)
            # the distance has at most two local minima along an ellipse: refine the two best
            # sampled ones and keep the nearer
            padded = np.pad(d2, ((0, 0), (1, 1)), constant_values=np.inf)
            local = (d2 <= padded[:, :-2]) & (d2 <= padded[:, 2:])
            best = np.argsort(np.where(local, d2, np.inf), axis=1)[:, :2]
            d = [np.linalg.norm(block - self._points(self._newton(block, guesses[best[:, k]], lo, hi)), axis=1)
                 for k in range(2)]
            out[i:i + 2048] = np.minimum(*d)
        ends = np.minimum(np.linalg.norm(pts - np.asarray(self.start), axis=1),
                          np.linalg.norm(pts - np.asarray(self.end), axis=1))
        return np.minimum(out, ends)

    def project(self, pts: np.ndarray) -> np.ndarray:
        (cx, cy), (a, b) = self.center, self.semi_axes
        t0 = np.arctan2((pts[:, 1] - cy) / b, (pts[:, 0] - cx) / a)
        return self._points(self._newton(pts, t0, -np.inf, np.inf))

    def describe(self) -> str:
        (cx, cy), (a, b) = self.center, self.semi_axes
        ellipse = f"the ellipse centred at ({fmt(cx)}, {fmt(cy)}) with semi-axes {fmt(a)} along x and {fmt(b)} along y"
        if self._full():
            return ellipse
        # the parameter t of (cx + a cos t, cy + b sin t)
        return f"the arc of {ellipse} at the parameters {self._range_text()} (x = cx + a cos t, y = cy + b sin t)"

    def _gmsh_arc(self, script: Script, a: Ref, center: Ref, point: PointMaker, b: Ref) -> Ref:
        (cx, cy), (sa, sb) = self.center, self.semi_axes
        major = point((cx + sa, cy) if sa >= sb else (cx, cy + sb))
        return script.geo("addEllipseArc", a, center, major, b)


