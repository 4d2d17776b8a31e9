"""Structured meshes for axis-aligned rectangles and boxes, made by NGSolve itself.

The rule of the DOLFINx track (``casekit/tracks/dolfinx/solvers/structured.py``, which cannot be
imported here): a shape a structured grid can carry is gridded directly, n = ceil(L / h) cells
per side (never coarser than asked), by ``ngsolve.meshes.MakeStructured2DMesh`` /
``MakeStructured3DMesh`` (simplices: the track meshes simplices only), mapped onto [lo, hi].  A
unit cube at 42 cells across took 7-13 s of netgen meshing against a 1.5 s solve.  Boundary
parts are named by the domain's own geometry (the distance of each boundary element's midpoint to
each tagged part), so the names are the registry's, as through netgen; a side whose elements
are not all of one tag returns ``None``.  Anything else -- holes, curved or slanted edges,
periodic sides, corners to refine -- returns ``None`` and goes through netgen.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from casekit.domains.geometry import Box
from casekit.domains.geometry.region import Region


def axis_aligned_box(geometry: Any) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(lo, hi) of a geometry that is exactly an axis-aligned rectangle or box with nothing a
    structured grid cannot carry; else None (the DOLFINx track's test, copied)."""
    if isinstance(geometry, Box):
        if geometry.periodic or geometry.refine_points:
            return None
        return tuple(geometry.lo), tuple(geometry.hi)
    if not isinstance(geometry, Region) or geometry.holes or geometry.periodic or geometry.refine_points:
        return None
    segments = [p.segment for p in geometry.outer.pieces]
    if len(segments) != 4 or any(s.curved for s in segments):
        return None
    scale = geometry.diameter()
    for s in segments:
        (x0, y0), (x1, y1) = s.start[:2], s.end[:2]
        if abs(x0 - x1) > 1e-12 * scale and abs(y0 - y1) > 1e-12 * scale:
            return None
    xs = [s.start[0] for s in segments]
    ys = [s.start[1] for s in segments]
    return (min(xs), min(ys)), (max(xs), max(ys))


def structured_mesh(geometry: Any, h: float) -> Any:
    """The NGSolve mesh of a structured grid of spacing about ``h`` with the registry's boundary
    names, or None."""
    from ngsolve.meshes import MakeStructured2DMesh, MakeStructured3DMesh

    box = axis_aligned_box(geometry)
    if box is None:
        return None
    dim = len(box[0])
    lo, hi = (np.asarray(v, dtype=float) for v in box)
    # never coarser than asked
    n = [max(1, math.ceil(float(hi[i] - lo[i]) / h - 1e-9)) for i in range(dim)]
    mapping = None
    if np.any(lo != 0.0) or np.any(hi != 1.0):  # the generators grid [0, 1]^dim
        def mapping(*x: float) -> tuple[float, ...]:
            return tuple(float(lo[i] + (hi[i] - lo[i]) * x[i]) for i in range(dim))
    if dim == 2:
        m = MakeStructured2DMesh(quads=False, nx=n[0], ny=n[1], mapping=mapping)
        facets = m.ngmesh.Elements1D().NumPy()
    else:
        m = MakeStructured3DMesh(hexes=False, nx=n[0], ny=n[1], nz=n[2], mapping=mapping)
        facets = m.ngmesh.Elements2D().NumPy()
    coords = m.ngmesh.Coordinates()
    mid = coords[facets["nodes"][:, :dim] - 1].mean(axis=1)  # netgen numbers points from 1
    tags = geometry.tags()
    found = np.full(len(mid), -1)
    tol = 1e-9 * geometry.diameter()
    for k, t in enumerate(tags):
        found[(geometry.tag_distance(t, mid) < tol) & (found < 0)] = k
    # the generator's sides (regions numbered from 1): each must be one tag of the registry
    for side in np.unique(facets["index"]):
        on = np.unique(found[facets["index"] == side])
        if len(on) != 1 or on[0] < 0:  # an element of no part, or a side of two: not the shape it seemed
            return None
        m.ngmesh.SetBCName(int(side) - 1, tags[int(on[0])])
    return m
