"""DOLFINx calibration and reference solvers (run inside the sandbox, DOLFINx 0.11).

``solve(case_spec, settings)`` builds the mesh of the case's domain from the domain registry,
runs the family's solver (one module per family under ``families/``), samples the result on the
evaluation grid with the exact-domain mask and writes ``solution.npz`` and ``meta.json`` --
exactly the contract of an agent's submission.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from casekit.registry import Registry


@dataclass
class Result:
    """The unknown to sample (the output's source unknown) and solver diagnostics."""

    u: Any
    info: dict[str, Any] = field(default_factory=dict)


FamilySolver = Callable[[Any], Result]
FAMILY_SOLVERS: Registry[FamilySolver] = Registry("DOLFINx family solver",
                                                  plugins="casekit.tracks.dolfinx.solvers.families")


def family(name: str) -> Callable[[FamilySolver], FamilySolver]:
    def deco(fn: FamilySolver) -> FamilySolver:
        return FAMILY_SOLVERS.register(name, fn)

    return deco


def solve(case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
    from casekit.solvers.artifacts import OutputGrid
    from casekit.tracks.dolfinx.solvers.problem import Problem
    from casekit.tracks.dolfinx.solvers.sampling import evaluate

    start = time.perf_counter()
    solver = FAMILY_SOLVERS.get(case_spec["pde"]["type"])
    problem = Problem(case_spec, settings)
    result = solver(problem)
    grid = OutputGrid(case_spec)
    values = evaluate(result.u, grid.points[grid.inside])
    info = {"degree": problem.settings.degree, "resolution": problem.settings.cells_across,
            "cells": problem.mesh.topology.index_map(problem.dim).size_local, **result.info}
    if case_spec.get("targets"):
        from casekit.solvers.targets import write
        from casekit.tracks.dolfinx.solvers.targets import compute

        write(compute(problem, result.u, grid.points[grid.inside]))
    grid.write(grid.assemble(values), time.perf_counter() - start, info)
