"""Firedrake calibration solvers (run inside the sandbox, in the Firedrake environment).

``solve(case_spec, settings)`` reads the mesh casekit wrote from its domain registry
(``calibration_mesh.msh``: gmsh 2.2, boundary id k = the k-th tag of ``domain.boundary_tags``),
builds the family's weak form in UFL from the case_spec's expressions (casekit's one parser,
then :func:`casekit.solvers.ufl_expr.to_ufl`), solves with PETSc (Newton with a direct LU
solve: one iteration for linear problems), samples the unknown on the evaluation grid and writes
``solution.npz`` and ``meta.json`` (and ``targets.json`` when the case asks for target values:
``targets``) -- the contract of an agent's submission.  Imports only
casekit's light modules (expressions, settings, grid): the environment needs no meshing stack.

The straight-sided mesh limits curved domains to second order in the geometry.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from casekit.registry import Registry

FamilySolver = Callable[[Any], tuple[Any, dict[str, Any]]]
FAMILY_SOLVERS: Registry[FamilySolver] = Registry("Firedrake family solver",
                                                  plugins="casekit.tracks.firedrake.solvers.families")
MESH = "calibration_mesh.msh"


def family(*names: str) -> Callable[[FamilySolver], FamilySolver]:
    def deco(fn: FamilySolver) -> FamilySolver:
        for name in names:
            FAMILY_SOLVERS.register(name, fn)
        return fn

    return deco


def solve(case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
    from casekit.tracks.firedrake.solvers.problem import Problem

    start = time.perf_counter()
    p = Problem(case_spec, settings)
    u, info = FAMILY_SOLVERS.get(case_spec["pde"]["type"])(p)
    write_outputs(p, u, time.perf_counter() - start, info)


def write_outputs(p: Any, u: Any, seconds: float, info: dict[str, Any]) -> None:
    from casekit.grid import Grid

    spec = p.spec
    grid = Grid.from_spec(spec["eval_grid"])
    axes = grid.axes()
    mesh_axes = [axes[k] for k in ("x", "y", "z")[: p.dim]]
    mesh = np.meshgrid(*mesh_axes[::-1], indexing="ij")  # (z,) y, x
    pts = np.column_stack([m.ravel() for m in mesh[::-1]])
    values = p.sample(u, pts)  # (N,) or (N, n)
    comps = spec["output"].get("components")
    arrays = {}
    if comps:
        for i, name in enumerate(comps):
            arrays[name] = values[:, i].reshape(grid.shape)
    else:
        v = values if values.ndim == 1 else np.linalg.norm(values, axis=1)
        arrays["u"] = v.reshape(grid.shape)
    if spec.get("targets"):
        from casekit.solvers.artifacts import OutputGrid
        from casekit.solvers.targets import write
        from casekit.tracks.firedrake.solvers.targets import compute

        inside = OutputGrid(spec)
        write(compute(p, u, inside.points[inside.inside]))
    np.savez("solution.npz", **axes, **arrays)
    with open("meta.json", "w", encoding="utf-8") as fh:
        json.dump({"wall_time_sec": seconds, "status": "ok",
                   "solver_info": {k: v for k, v in info.items() if isinstance(v, (int, float, str))}}, fh)
