"""Values of a DOLFINx function at grid points, robust at curved boundaries.

Points inside the exact domain but just outside the polygonal mesh (where a curved boundary is
approximated by straight edges) get the value of the nearest cell instead of a spurious NaN.
"""

from __future__ import annotations

from typing import Any

import dolfinx_solver  # noqa: F401
import numpy as np
from dolfinx import geometry


def evaluate(u: Any, points: np.ndarray) -> np.ndarray:
    """``u`` at ``points`` (N, dim): shape (N,) for scalars, (N, k) for vectors."""
    mesh = u.function_space.mesh
    tdim = mesh.topology.dim
    pts = np.zeros((len(points), 3))
    pts[:, : points.shape[1]] = points
    tree = geometry.bb_tree(mesh, tdim)
    candidates = geometry.compute_collisions_points(tree, pts)
    colliding = geometry.compute_colliding_cells(mesh, candidates, pts)
    cells = np.full(len(pts), -1, dtype=np.int32)
    for i in range(len(pts)):
        links = colliding.links(i)
        if len(links):
            cells[i] = links[0]
    missing = np.flatnonzero(cells < 0)
    if len(missing):
        num = mesh.topology.index_map(tdim).size_local
        mid = geometry.create_midpoint_tree(mesh, tdim, np.arange(num, dtype=np.int32))
        cells[missing] = geometry.compute_closest_entity(tree, mid, mesh, pts[missing])
    values = u.eval(pts, cells)
    return values[:, 0] if values.shape[1] == 1 else values
