"""The trivial baselines ("cheaters"): fields computed from the agent view alone, without solving.

Every leak-free case must reject them at the accuracy gate.  They use only what an agent sees
(the case_spec): a zero field, the Dirichlet data of the first boundary part evaluated
everywhere, the Dirichlet data of the nearest boundary part at every point, the initial data (as
if at the final time), and the forcing evaluated as the solution.  This module is part of the
sandbox runtime (numpy and casekit's expression and domain modules only; no FEM library): the
build scores the baselines in-process, ``casekit baselines`` writes them as submissions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.domains import resolve
from casekit.expr.tree import points_function
from casekit.grid import Grid

KINDS = ("zero", "dirichlet_first", "dirichlet_nearest", "initial", "forcing")


def applicable(kind: str, case_spec: dict[str, Any]) -> bool:
    return "ic" in case_spec if kind == "initial" else kind in KINDS


def _evaluate(value: Any, pts: np.ndarray, t: float, dim: int) -> np.ndarray:
    parts = value if isinstance(value, list) else [value]
    cols = [points_function(v, dim)(pts, t) for v in parts]
    return np.column_stack(cols) if isinstance(value, list) else cols[0]


def _values(kind: str, case_spec: dict[str, Any], grid: Grid) -> np.ndarray:
    pts, dim = grid.points(), grid.dim
    time = case_spec["pde"].get("time")
    t = float(time["t_end"]) if time else 0.0
    bc = case_spec["bc"]
    entries = bc.get("dirichlet") or bc.get("robin") or bc.get("neumann") or []
    if kind == "zero" or (kind.startswith("dirichlet") and not entries):
        return np.zeros(len(pts))
    if kind == "dirichlet_first":
        return _evaluate(entries[0]["value"], pts, t, dim)
    if kind == "dirichlet_nearest":
        dom = case_spec["domain"]
        geometry = resolve(dom["type"], dom["geometry_params"], validated=True).geometry
        dist = np.column_stack([geometry.tag_distance(e["tag"], pts) for e in entries])
        nearest = dist.argmin(axis=1)
        stack = [_evaluate(e["value"], pts, t, dim) for e in entries]
        if stack[0].ndim == 1:
            return np.choose(nearest, stack)
        return np.stack([np.choose(nearest, [s[:, i] for s in stack]) for i in range(stack[0].shape[1])], axis=1)
    if kind == "initial":
        return _evaluate((case_spec.get("ic") or {"u": 0})["u"], pts, t, dim)
    forcing = next(iter(case_spec["pde"].get("forcing", {"f": 0}).values()))
    return _evaluate(forcing, pts, t, dim)


def arrays(kind: str, case_spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """The baseline's output arrays on the evaluation grid (NaN outside the domain)."""
    if kind not in KINDS:
        raise ValueError(f"unknown baseline {kind!r} (valid: {', '.join(KINDS)})")
    grid = Grid.from_spec(case_spec["eval_grid"])
    dom = case_spec["domain"]
    inside = resolve(dom["type"], dom["geometry_params"], validated=True).inside(grid.points())
    values = np.asarray(_values(kind, case_spec, grid), dtype=float)
    comps = case_spec["output"].get("components")
    if comps:
        v2 = values if values.ndim == 2 else np.repeat(values[:, None], len(comps), axis=1)
        cols = {c: v2[:, i] for i, c in enumerate(comps)}
    else:
        cols = {"u": np.linalg.norm(values, axis=1) if values.ndim == 2 else values}
    return {name: np.where(inside, col, np.nan).reshape(grid.shape) for name, col in cols.items()}


def solve(case_spec: dict[str, Any], kind: str) -> None:
    """Write the baseline's artifacts (``solution.npz``, ``meta.json``) like a submission."""
    import json

    from casekit.solvers import targets

    grid = Grid.from_spec(case_spec["eval_grid"])
    fields = arrays(kind, case_spec)
    np.savez("solution.npz", **grid.axes(), **fields)  # type: ignore[arg-type]
    if case_spec.get("targets"):
        targets.write(targets.from_grid(case_spec, fields, grid.points()))
    with open("meta.json", "w", encoding="utf-8") as fh:
        json.dump({"wall_time_sec": 0.0, "status": "ok", "solver_info": {"baseline": kind}}, fh)
