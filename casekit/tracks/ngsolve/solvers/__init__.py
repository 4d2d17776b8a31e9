"""NGSolve calibration and reference solvers (run inside the sandbox, NGSolve 6.2).

``solve(case_spec, settings)`` meshes the case's domain with netgen from the domain registry's
geometry (curved cells on the exact curves; a plain rectangle or box as NGSolve's own structured
grid, ``structured.py``), runs the solver of the family's *kind of form*
(``casekit.solvers.forms``: one module per kind under ``families/``), samples the result on the
evaluation grid with the exact-domain mask and writes ``solution.npz`` and ``meta.json`` (and
``targets.json`` when the case asks for target values: ``targets``) -- the contract of an agent's
submission.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from casekit.registry import Registry

#: netgen's 2-D mesh optimisation: one pass of swaps, smoothing and combining ("smcm", the first
#: third of one of its three default steps "smcmSmcmSmcm").  The default's 36 passes take 90% of
#: the meshing (a gear at 226 cells across: 11.7 s, against 1.7 s), and leave the smallest angle
#: of the hard templates (gear, star, dumbbell, multi_hole, eccentric annulus, L, T) at 35-42
#: degrees where one pass leaves 28-38 (none: 11-17).  The guide teaches the same options.  In 3-D
#: netgen's volume optimisation is kept: the surface options change nothing there, and fewer volume
#: passes leave a third more tetrahedra (and slivers without any).
MESHING_2D: dict[str, Any] = {"optsteps2d": 1, "optimize2d": "smcm"}

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
    info = {"degree": p.settings.degree, "resolution": p.settings.cells_across, "cells": p.mesh.ne, **info,
            **p.linear_solver_info()}
    if case_spec.get("targets"):
        from casekit.solvers.targets import write
        from casekit.tracks.ngsolve.solvers.targets import compute

        write(compute(p, u, grid.points[grid.inside]))
    grid.write(grid.assemble(values), time.perf_counter() - start, info)
