"""Evaluation-grid points where the prescribed data leave the solution undefined, and the masks
that score every other valid point.

Where two Dirichlet parts of the boundary meet with different values -- the two top corners of a
lid-driven cavity, whose lid moves and whose walls do not; the edges of a 3-D one -- the solution
has no value: a solver reports whichever condition it applied last, a convention and not an
approximation.  Scoring such a point fails an honest solver for its convention: flipping the
corner values of the imported lid-driven cavity (Navier-Stokes) moves its relative error by 0.10
against a tolerance of 0.075, and two tracks with different conventions cannot certify a
reference ladder there (NGSolve's gaps grew with the level).

The points are a function of the case_spec alone (:func:`unscored_points`: its Dirichlet data,
domain and grid): the derivation lists them as ``eval_grid.unscored`` (the prompt says so), and
:func:`scored_mask` -- the one mask every error uses: the build's e_base, ladder gaps and
cross-track agreement, the evaluator's verdicts -- recomputes them and refuses a case_spec whose
list is not what its data give, so a forged list cannot leave points out.  A Dirichlet part
meeting a Neumann or Robin one is not ambiguous (the Dirichlet value holds), nor are data that
agree where the parts meet (every manufactured case).  A point counts as ambiguous when any
component of vector data differs there, whichever component is scored.  Every point inside the
domain still needs a finite value (:func:`inside_mask`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.errors import CasekitError
from casekit.grid import Grid

#: a grid point lies on a boundary part within this fraction of the grid's smallest spacing
ON_PART = 1e-6
#: data of two parts differ where they meet beyond this, relative to the largest datum there
DIFFERENT = 1e-8
#: the most points a case_spec may list (the schema's bound: 12 cube edges of 80 points)
MAX_POINTS = 1024
POINTER = "/eval_grid/unscored"


def _grid_and_domain(case_spec: dict[str, Any]) -> tuple[Grid, Any]:
    from casekit.domains import resolve

    dom = case_spec["domain"]
    return Grid.from_spec(case_spec["eval_grid"]), resolve(dom["type"], dom["geometry_params"])


def _spacing(grid: Grid) -> np.ndarray:
    b = grid.bbox
    counts = [grid.nx, grid.ny] + ([grid.nz] if grid.nz is not None else [])
    return np.array([(b[2 * i + 1] - b[2 * i]) / (n - 1) for i, n in enumerate(counts)])


def _data(entry: dict[str, Any], case_spec: dict[str, Any], dim: int) -> Any:
    """A Dirichlet entry's value as exact sympy (a tuple for vector data), numeric parameters
    substituted."""
    from casekit.expr import as_expr, exact

    params = {k: v for k, v in (case_spec["pde"].get("params") or {}).items() if isinstance(v, (int, float))}
    variables = [*("x", "y", "z")[:dim], "t"]

    def one(v: Any) -> Any:
        e = exact(as_expr(v, variables=variables, params=list(params)))
        return e.subs({s: params[s.name] for s in e.free_symbols if s.name in params})

    value = entry["value"]
    return tuple(one(v) for v in value) if isinstance(value, list) else one(value)


def _ambiguous(case_spec: dict[str, Any], grid: Grid, domain: Any, inside: np.ndarray) -> np.ndarray:
    """Flat indices of the grid points inside the domain on two or more Dirichlet parts whose
    data differ there at the scored time (t_end, or 0 for a steady case) by more than
    :data:`DIFFERENT` times the largest datum on those parts (so the rounding of data that vanish
    at a corner -- sin(4 pi x) at x = 1 -- is no jump)."""
    from casekit import leak

    entries = [e for e in (case_spec.get("bc") or {}).get("dirichlet") or [] if "value" in e]
    if len(entries) < 2:
        return np.zeros(0, dtype=int)
    flat = np.flatnonzero(inside.ravel())
    pts = grid.points()[flat]
    tol = ON_PART * float(_spacing(grid).min())
    on = np.zeros((len(entries), len(pts)), dtype=bool)
    margin = 0.1 * float(domain.geometry.diameter()) + tol  # samples miss the part's ends
    for k, e in enumerate(entries):
        sample = np.asarray(domain.geometry.tag_points(e["tag"]), dtype=float)[:, :domain.dim]
        near = np.flatnonzero(np.all((pts >= sample.min(axis=0) - margin) & (pts <= sample.max(axis=0) + margin),
                                     axis=1))  # the part's box first: distances to curved parts cost
        on[k, near] = np.asarray(domain.geometry.tag_distance(e["tag"], pts[near])) <= tol
    shared = on.sum(axis=0) >= 2
    if not shared.any():
        return np.zeros(0, dtype=int)
    time = case_spec["pde"].get("time")
    t = float(time["t_end"]) if time else 0.0
    values, scale = [], 1e-300
    for k, e in enumerate(entries):
        data = _data(e, case_spec, domain.dim)
        parts = data if isinstance(data, tuple) else (data,)
        at = pts[on[k]]  # every grid point on the part: its data's scale
        v = np.column_stack([np.broadcast_to(np.asarray(leak.evaluate(c, at, t, domain.dim), dtype=float), len(at))
                             for c in parts])
        scale = max(scale, float(np.max(np.abs(v))) if v.size else 0.0)
        full = np.full((len(pts), v.shape[1]), np.nan)
        full[on[k]] = v
        values.append(full[shared])
    stacked = np.stack(values)  # (parts, shared points, components): NaN where a part does not reach
    spread = np.nanmax(stacked, axis=0) - np.nanmin(stacked, axis=0)
    return flat[shared][np.any(spread > DIFFERENT * scale, axis=1)]


def unscored_points(case_spec: dict[str, Any]) -> list[list[float]]:
    """The grid points (coordinates, sorted) of ``case_spec`` inside its domain that lie on two
    Dirichlet parts whose data differ there; empty for most cases."""
    grid, domain = _grid_and_domain(case_spec)
    inside = grid.mask(domain.inside)
    pts = grid.points()[_ambiguous(case_spec, grid, domain, inside)]
    return sorted([float(round(c, 12)) for c in p] for p in pts)


def inside_mask(case_spec: dict[str, Any]) -> np.ndarray:
    """The grid points inside the domain (grid shape): where a solution must be finite."""
    grid, domain = _grid_and_domain(case_spec)
    return grid.mask(domain.inside)


def scored_mask(case_spec: dict[str, Any], case_id: str | None = None) -> np.ndarray:
    """The grid points every error is computed on (grid shape): inside the domain, less the
    points where two Dirichlet parts meet with different data -- recomputed from the data, and
    the case_spec's ``eval_grid.unscored`` required to list exactly them."""
    grid, domain = _grid_and_domain(case_spec)
    inside = grid.mask(domain.inside)
    ambiguous = _ambiguous(case_spec, grid, domain, inside)
    listed = case_spec["eval_grid"].get("unscored") or []
    expected = sorted([float(round(c, 12)) for c in p] for p in grid.points()[ambiguous])
    if not isinstance(listed, list) or len(listed) > MAX_POINTS or _normalised(listed) != expected:
        shown = ", ".join(str(p) for p in expected[:4]) + (" ..." if len(expected) > 4 else "")
        raise CasekitError("eval_grid.unscored is not the list of grid points where two Dirichlet parts meet "
                           "with different data", POINTER, case_id,
                           valid=f"{len(expected)} point(s): {shown}" if expected else "no such point (leave it out)")
    out = inside.copy()
    out.reshape(-1)[ambiguous] = False
    if not out.any():
        raise CasekitError("no grid point inside the domain is scored", "/eval_grid", case_id,
                           valid="an evaluation grid with points inside the domain")
    return out


def _normalised(listed: list[Any]) -> list[list[float]] | None:
    try:
        return sorted([float(round(float(c), 12)) for c in p] for p in listed)
    except (TypeError, ValueError):
        return None
