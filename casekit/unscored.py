"""Evaluation-grid points where the prescribed data leave the solution undefined, and the mask
that scores every other valid point.

Where two Dirichlet parts of the boundary meet with different values -- the two top corners of a
lid-driven cavity, whose lid moves and whose walls do not -- the solution has no value: a solver
reports whichever condition it applied last, a convention and not an approximation.  Scoring such
a point fails an honest solver for its convention: flipping the corner values of the imported
lid-driven cavity (Navier-Stokes) moves its relative error by 0.10 against a tolerance of 0.075,
and two tracks with different conventions cannot certify a reference ladder there (NGSolve's gaps
grew with the level).  The derivation lists those grid points in the case_spec
(``eval_grid.unscored``, the prompt says so) and every error -- the build's e_base, its ladder
gaps and its cross-track agreement, the evaluator's verdicts -- leaves them out through
:func:`scored_mask`.  A Dirichlet part meeting a Neumann or Robin one is not ambiguous (the
Dirichlet value holds), nor are data that agree where the parts meet (every manufactured case).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from casekit.grid import Grid

if TYPE_CHECKING:
    from casekit.derive import Derived

#: a grid point lies on a boundary part within this fraction of the grid's smallest spacing
ON_PART = 1e-6
#: data of two parts differ where they meet beyond this, relative to the larger of them (or 1)
DIFFERENT = 1e-8


def unscored_points(d: Derived) -> list[list[float]]:
    """The grid points of ``d`` (inside its domain) that lie on two Dirichlet parts whose data
    differ there at the scored time, sorted; empty for most cases."""
    from casekit import leak

    dirichlet = [b for b in d.boundary if b.kind == "dirichlet" and b.value is not None]
    if len(dirichlet) < 2:
        return []
    pts = d.grid.points()
    pts = pts[d.grid.mask(d.domain.inside).ravel()]
    tol = ON_PART * min(_spacing(d.grid))
    on = {b.tag: np.asarray(d.domain.geometry.tag_distance(b.tag, pts)) <= tol for b in dirichlet}
    shared = np.sum(np.stack(list(on.values())), axis=0) >= 2
    if not shared.any():
        return []
    at = pts[shared]
    values = []
    for b in dirichlet:
        parts = b.value if isinstance(b.value, (tuple, list)) else (b.value,)
        v = np.column_stack([np.broadcast_to(np.asarray(leak.evaluate(c, at, d.t_out, d.dim), dtype=float), len(at))
                             for c in parts])
        values.append(np.where(on[b.tag][shared][:, None], v, np.nan))
    stacked = np.stack(values)  # (parts, points, components): NaN where a part does not reach
    spread = np.nanmax(stacked, axis=0) - np.nanmin(stacked, axis=0)
    scale = np.maximum(1.0, np.nanmax(np.abs(stacked), axis=0))
    ambiguous = np.any(spread > DIFFERENT * scale, axis=1)
    return sorted([float(round(c, 12)) for c in p] for p in at[ambiguous])


def _spacing(grid: Grid) -> list[float]:
    b = grid.bbox
    counts = [grid.nx, grid.ny] + ([grid.nz] if grid.nz is not None else [])
    return [(b[2 * i + 1] - b[2 * i]) / (n - 1) for i, n in enumerate(counts)]


def exclude(mask: np.ndarray, grid: Grid, points: Any) -> np.ndarray:
    """``mask`` (grid shape) without the grid points ``points`` (a case_spec's
    ``eval_grid.unscored``; none: ``mask`` itself)."""
    if not points:
        return mask
    out = mask.copy()
    lo = np.array(grid.bbox[0::2], dtype=float)
    h = np.array(_spacing(grid))
    for p in np.asarray(points, dtype=float).reshape(len(points), -1):
        index = np.rint((p - lo) / h).astype(int)
        if np.any(np.abs(lo + index * h - p) > ON_PART * h) or np.any(index < 0) or np.any(
                index >= np.array(grid.shape[::-1])):
            raise ValueError(f"eval_grid.unscored point {p.tolist()} is not a point of the grid")
        out[tuple(index[::-1])] = False  # the array is (z,) y, x
    return out


def scored_mask(case_spec: dict[str, Any]) -> np.ndarray:
    """The grid points every error is computed on: inside the domain, not ``eval_grid.unscored``."""
    from casekit.domains.template import resolve

    dom = case_spec["domain"]
    grid = Grid.from_spec(case_spec["eval_grid"])
    inside = grid.mask(resolve(dom["type"], dom["geometry_params"]).inside)
    return exclude(inside, grid, case_spec["eval_grid"].get("unscored"))
