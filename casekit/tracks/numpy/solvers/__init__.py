"""The numpy track's calibration solvers (run inside the sandbox; casekit's runtime modules and
these solvers travel inside the calibration's solver.py).

``solve(case_spec, settings)`` runs the family's solver from :data:`FAMILY_SOLVERS` and writes the
canonical artifacts.  The Poisson solver is a 5-point finite-difference scheme on a uniform grid
of ``settings["cells_across"]`` intervals (second order), with the coefficient kappa averaged at
cell faces and Dirichlet data on the whole boundary; the grid solution is interpolated
(bilinearly) onto the evaluation grid.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from casekit.registry import Registry

FamilySolver = Callable[[dict[str, Any], dict[str, Any]], np.ndarray]
FAMILY_SOLVERS: Registry[FamilySolver] = Registry("numpy family solver")


def family(name: str) -> Callable[[FamilySolver], FamilySolver]:
    def deco(fn: FamilySolver) -> FamilySolver:
        return FAMILY_SOLVERS.register(name, fn)

    return deco


def _field(value: Any, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    from casekit.expr import as_expr, to_numpy

    pts = np.column_stack([X.ravel(), Y.ravel()])
    return np.broadcast_to(np.asarray(to_numpy(as_expr(value, variables=["x", "y"]), 2)(pts, 0.0), dtype=float),
                           (len(pts),)).reshape(X.shape)


@family("poisson")
def poisson(case_spec: dict[str, Any], settings: dict[str, Any]) -> np.ndarray:
    """-div(kappa grad u) = f with u given on the boundary: the grid values (n+1, n+1)."""
    import scipy.sparse as sps
    import scipy.sparse.linalg as spla

    bc = case_spec["bc"]
    if set(bc) - {"dirichlet"}:
        raise ValueError(f"the numpy Poisson solver handles Dirichlet data only, not {sorted(set(bc))}")
    x0, x1, y0, y1 = (float(v) for v in case_spec["domain"]["bounds"][:4])
    n = int(settings.get("cells_across", 32))
    x, y = np.linspace(x0, x1, n + 1), np.linspace(y0, y1, n + 1)
    hx, hy = (x1 - x0) / n, (y1 - y0) / n
    Y, X = np.meshgrid(y, x, indexing="ij")
    kappa = case_spec["pde"]["params"].get("kappa", 1.0)
    kx = _field(kappa, 0.5 * (X[1:-1, 1:] + X[1:-1, :-1]), Y[1:-1, 1:])   # at vertical faces
    ky = _field(kappa, X[1:, 1:-1], 0.5 * (Y[1:, 1:-1] + Y[:-1, 1:-1]))   # at horizontal faces
    f = _field(case_spec["pde"]["forcing"]["f"], X, Y)
    u = np.zeros_like(X)
    boundary = np.zeros_like(X, dtype=bool)
    boundary[0, :] = boundary[-1, :] = boundary[:, 0] = boundary[:, -1] = True
    from casekit.domains import resolve

    dom = case_spec["domain"]
    geometry = resolve(dom["type"], dom["geometry_params"]).geometry
    pts = np.column_stack([X[boundary], Y[boundary]])
    entries = bc["dirichlet"]
    near = np.column_stack([geometry.tag_distance(e["tag"], pts) for e in entries]).argmin(axis=1)
    values = np.stack([_field(e["value"], X[boundary], Y[boundary]) for e in entries])
    u[boundary] = values[near, np.arange(len(pts))]
    m = n - 1
    idx = np.arange(m * m).reshape(m, m)
    rows, cols, vals = [], [], []
    rhs = f[1:-1, 1:-1].copy().ravel()
    west, east = kx[:, :-1], kx[:, 1:]      # faces left and right of each interior node
    south, north = ky[:-1, :], ky[1:, :]
    diag = (west + east) / hx**2 + (south + north) / hy**2
    rows.append(idx.ravel())
    cols.append(idx.ravel())
    vals.append(diag.ravel())
    for (dj, di), k, h in (((0, -1), west, hx), ((0, 1), east, hx), ((-1, 0), south, hy), ((1, 0), north, hy)):
        jj, ii = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
        nj, ni = jj + dj, ii + di
        inside = (nj >= 0) & (nj < m) & (ni >= 0) & (ni < m)
        rows.append(idx[inside])
        cols.append(idx[nj[inside], ni[inside]])
        vals.append(-k[inside] / h**2)
        rhs[idx[~inside]] += (k[~inside] / h**2) * u[nj[~inside] + 1, ni[~inside] + 1]
    A = sps.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m * m, m * m))
    u[1:-1, 1:-1] = spla.spsolve(A, rhs).reshape(m, m)
    return u


def solve(case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
    from scipy.interpolate import RegularGridInterpolator

    from casekit.solvers.artifacts import OutputGrid

    start = time.perf_counter()
    u = FAMILY_SOLVERS.get(case_spec["pde"]["type"])(case_spec, settings)
    x0, x1, y0, y1 = (float(v) for v in case_spec["domain"]["bounds"][:4])
    n = u.shape[1] - 1
    interp = RegularGridInterpolator((np.linspace(y0, y1, n + 1), np.linspace(x0, x1, n + 1)), u)
    grid = OutputGrid(case_spec)
    inside = grid.points[grid.inside]
    values = interp(np.column_stack([inside[:, 1], inside[:, 0]]))
    grid.write(grid.assemble(values), time.perf_counter() - start, {"resolution": n, "dofs": (n - 1) ** 2})
