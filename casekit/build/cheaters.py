"""Trivial "cheater" submissions: every leak-free case must reject them at the accuracy gate.

They use only what an agent sees (the case_spec): a zero field, the Dirichlet data of the first
boundary part evaluated everywhere, the Dirichlet data of the nearest boundary part at every
point, the initial data (as if at the final time), and the forcing evaluated as the solution.
"""

from __future__ import annotations

from typing import Any

KINDS = ("zero", "dirichlet_first", "dirichlet_nearest", "initial", "forcing")

_SOURCE = '''"""casekit cheater submission: {kind}."""

import json

import numpy as np

from casekit.domains import resolve
from casekit.expr import as_expr, to_numpy
from casekit.grid import Grid

KIND = {kind!r}


def _evaluate(value, pts, t, variables, dim):
    parts = value if isinstance(value, list) else [value]
    cols = [to_numpy(as_expr(v, variables=variables), dim)(pts, t) for v in parts]
    return np.column_stack(cols) if isinstance(value, list) else cols[0]


def solve(case_spec):
    grid = Grid.from_spec(case_spec["eval_grid"])
    pts, dim = grid.points(), grid.dim
    time = case_spec["pde"].get("time")
    t = float(time["t_end"]) if time else 0.0
    variables = ["x", "y", "z"][:dim] + (["t"] if time else [])
    bc = case_spec["bc"]
    entries = bc.get("dirichlet") or bc.get("robin") or bc.get("neumann") or []
    if KIND == "zero" or (KIND.startswith("dirichlet") and not entries):
        values = np.zeros(len(pts))
    elif KIND == "dirichlet_first":
        values = _evaluate(entries[0]["value"], pts, t, variables, dim)
    elif KIND == "dirichlet_nearest":
        dom = case_spec["domain"]
        geometry = resolve(dom["type"], dom["geometry_params"]).geometry
        dist = np.column_stack([geometry.tag_distance(e["tag"], pts) for e in entries])
        nearest = dist.argmin(axis=1)
        stack = [_evaluate(e["value"], pts, t, variables, dim) for e in entries]
        values = np.choose(nearest, stack) if stack[0].ndim == 1 else np.stack(
            [np.choose(nearest, [s[:, i] for s in stack]) for i in range(stack[0].shape[1])], axis=1)
    elif KIND == "initial":
        ic = case_spec.get("ic") or {{"u": 0}}
        values = _evaluate(ic["u"], pts, t, variables, dim)
    else:
        forcing = next(iter(case_spec["pde"].get("forcing", {{"f": 0}}).values()))
        values = _evaluate(forcing, pts, t, variables, dim)
    values = np.asarray(values, dtype=float)
    out = case_spec["output"]
    comps = out.get("components")
    if comps:
        v2 = values if values.ndim == 2 else np.repeat(values[:, None], len(comps), axis=1)
        arrays = {{c: v2[:, i].reshape(grid.shape) for i, c in enumerate(comps)}}
    else:
        v1 = np.linalg.norm(values, axis=1) if values.ndim == 2 else values
        arrays = {{"u": v1.reshape(grid.shape)}}
    np.savez("solution.npz", **grid.axes(), **arrays)
    with open("meta.json", "w") as fh:
        json.dump({{"wall_time_sec": 0.0, "status": "ok"}}, fh)
'''


def cheater(kind: str) -> dict[str, bytes]:
    if kind not in KINDS:
        raise ValueError(f"unknown cheater {kind!r}")
    return {"solver.py": _SOURCE.format(kind=kind).encode()}


def applicable(kind: str, case_spec: dict[str, Any]) -> bool:
    if kind == "initial":
        return "ic" in case_spec
    return True
