"""The evaluation grid: one convention for every consumer.

``x = linspace(bbox[0], bbox[1], nx)`` (endpoints included), likewise y and z; arrays are in C
order with ``u[j, i] = u(x[i], y[j])`` in 2-D and ``u[k, j, i] = u(x[i], y[j], z[k])`` in 3-D.
Points outside the exact domain are masked (NaN in fields).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: most points of an evaluation grid: 512 x 512 in 2-D, 64 x 64 x 64 in 3-D (the committed cases
#: use at most 176 x 176 and 25 x 25 x 25).  One field on it is 2 MiB of doubles; the validator,
#: the build and the evaluator hold a few such arrays per case and evaluate every expression on
#: the points inside, so the bound keeps a case within seconds and tens of MB (a 2000 x 2000 grid
#: took a minute and 4 GB to validate)
MAX_POINTS = 512 * 512
#: the bound in words, for messages
MAX_POINTS_TEXT = "at most 512 x 512 points in 2-D, 64 x 64 x 64 in 3-D"


def too_many_points(nx: int, ny: int, nz: int | None = None) -> str | None:
    """Why a grid of this size is refused (None when it is not): the message names the size."""
    n = nx * ny * (nz or 1)
    if n <= MAX_POINTS:
        return None
    shape = f"{nx} x {ny}" + (f" x {nz}" if nz is not None else "")
    return f"the evaluation grid has {n} points ({shape}), more than the {MAX_POINTS} allowed"


@dataclass(frozen=True)
class Grid:
    nx: int
    ny: int
    bbox: tuple[float, ...]
    nz: int | None = None

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Grid:
        return cls(int(spec["nx"]), int(spec["ny"]), tuple(float(v) for v in spec["bbox"]),
                   int(spec["nz"]) if spec.get("nz") is not None else None)

    @property
    def dim(self) -> int:
        return 2 if self.nz is None else 3

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.ny, self.nx) if self.nz is None else (self.nz, self.ny, self.nx)

    def axes(self) -> dict[str, np.ndarray]:
        b = self.bbox
        out = {"x": np.linspace(b[0], b[1], self.nx), "y": np.linspace(b[2], b[3], self.ny)}
        if self.nz is not None:
            out["z"] = np.linspace(b[4], b[5], self.nz)
        return out

    def points(self) -> np.ndarray:
        """All grid points, shape (prod(shape), dim), in the array's C order."""
        ax = self.axes()
        if self.nz is None:
            yy, xx = np.meshgrid(ax["y"], ax["x"], indexing="ij")
            return np.column_stack([xx.ravel(), yy.ravel()])
        zz, yy, xx = np.meshgrid(ax["z"], ax["y"], ax["x"], indexing="ij")
        return np.column_stack([xx.ravel(), yy.ravel(), zz.ravel()])

    def mask(self, inside: Any) -> np.ndarray:
        """Boolean array of grid shape: True where ``inside(points)`` holds."""
        return np.asarray(inside(self.points()), dtype=bool).reshape(self.shape)

    def spec(self, mask_outside: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "uniform", "nx": self.nx, "ny": self.ny}
        if self.nz is not None:
            out["nz"] = self.nz
        out["bbox"] = [_clean(v) for v in self.bbox]
        out["mask_outside"] = mask_outside
        return out


def _clean(v: float) -> float:
    r = round(float(v), 12)
    return int(r) if r.is_integer() else r
