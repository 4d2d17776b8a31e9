"""The only 3-D shape: the axis-aligned :class:`Box`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from casekit.domains.geometry.carriers import Carrier, LineCarrier, normals_at
from casekit.domains.geometry.region import BOUNDARY_TOL, PeriodicPair

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

    def face(self, tag: str) -> tuple[int, int]:
        """(axis, side) of a face: side 0 is the low face."""
        i = _BOX_TAGS.index(tag)
        return i // 2, i % 2

    def tag_points(self, tag: str, n: int = 7) -> np.ndarray:
        """An n x n grid of points on a face, its edges excluded."""
        axis, side = self.face(tag)
        g = np.linspace(0.05, 0.95, n)
        others = [i for i in range(3) if i != axis]
        a, b = np.meshgrid(g, g)
        pts = np.zeros((a.size, 3))
        for i, w in zip(others, (a.ravel(), b.ravel()), strict=True):
            pts[:, i] = self.lo[i] + w * (self.hi[i] - self.lo[i])
        pts[:, axis] = self.hi[axis] if side else self.lo[axis]
        return pts

    def tag_normals(self, tag: str, n: int = 7) -> np.ndarray:
        """The outward unit normals at :meth:`tag_points`."""
        return normals_at(self.carriers(tag)[0], self.tag_points(tag, n))

    def carriers(self, tag: str) -> list[Carrier]:
        axis, side = self.face(tag)
        point = tuple(self.hi[i] if (i == axis and side) else self.lo[i] for i in range(3))
        normal = tuple((1.0 if side else -1.0) if i == axis else 0.0 for i in range(3))
        return [LineCarrier(point, normal)]

    def curved(self) -> bool:
        return False

    def charts(self) -> list[dict]:
        return []

    def measure(self) -> float:
        return float(np.prod(np.subtract(self.hi, self.lo)))

    def bbox(self) -> tuple[float, ...]:
        return (self.lo[0], self.hi[0], self.lo[1], self.hi[1], self.lo[2], self.hi[2])

    def diameter(self) -> float:
        return float(np.linalg.norm(np.subtract(self.hi, self.lo)))

    def boundary_length(self, tag: str | None = None) -> float:
        """Total face area (of one tag)."""
        ext = np.subtract(self.hi, self.lo)
        areas = {t: float(np.prod(np.delete(ext, self.face(t)[0]))) for t in _BOX_TAGS}
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
        axis, side = self.face(tag)
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
