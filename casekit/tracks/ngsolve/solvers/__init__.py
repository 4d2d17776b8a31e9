"""NGSolve calibration and reference solvers (run inside the sandbox, NGSolve 6.2).

``solve(case_spec, settings)`` meshes the case's domain with netgen from the domain registry's
geometry (curved cells on the exact curves), runs the solver of the family's *kind of form*
(``casekit.solvers.forms``: one module per kind under ``families/``), samples the result on the
evaluation grid with the exact-domain mask and writes ``solution.npz`` and ``meta.json`` -- the
contract of an agent's submission.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from casekit.registry import Registry

FamilySolver = Callable[[Any], tuple[Any, dict[str, Any]]]
FAMILY_SOLVERS: Registry[FamilySolver] = Registry("NGSolve family solver",
                                                  plugins="casekit.tracks.ngsolve.solvers.families")


def for_forms(kind: type) -> Callable[[FamilySolver], FamilySolver]:
    """Register a solver for every family whose form is of ``kind``."""
    from casekit.solvers.forms import FORMS

    def deco(fn: FamilySolver) -> FamilySolver:
        for name, form in FORMS.items():
            if isinstance(form, kind):
                FAMILY_SOLVERS.register(name, fn)
        return fn

    return deco


def solve(case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
    from casekit.solvers.artifacts import OutputGrid
    from casekit.tracks.ngsolve.solvers.problem import Problem

    start = time.perf_counter()
    p = Problem(case_spec, settings)
    u, info = FAMILY_SOLVERS.get(case_spec["pde"]["type"])(p)
    grid = OutputGrid(case_spec)
    values = p.sample(u, grid.points[grid.inside])
    info = {"degree": p.settings.degree, "resolution": p.settings.cells_across, "cells": p.mesh.ne, **info}
    grid.write(grid.assemble(values), time.perf_counter() - start, info)
