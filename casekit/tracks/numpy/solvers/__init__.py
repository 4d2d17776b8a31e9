"""The numpy track's calibration solvers: finite volumes on a uniform grid of a box, plain NumPy
and SciPy (run inside the sandbox; casekit's runtime modules and these solvers travel inside the
calibration's ``solver.py``).

``solve(case_spec, settings)`` lays the node grid over the case's box (``box.Box``: the nodes
of the degree-``degree`` Lagrange space on a ``cells_across`` mesh), runs the solver of the
family's *kind of form* (``casekit.solvers.forms``: one module per kind under ``families/``),
interpolates the node values onto the evaluation grid (cubic splines) and writes
``solution.npz`` and ``meta.json`` (and ``targets.json`` when the case asks for target values:
``targets``) -- the contract of an agent's submission.  Every scheme is
second order in space and time (Crank-Nicolson or BDF2; Newmark's average acceleration for the
wave equation); nonlinear terms take Newton steps, each a sparse direct solve (a Krylov solve on
large 3-D grids: ``linalg``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from casekit.registry import Registry

#: a family's solver: (box) -> (node values (size,) or (size, k), solver info)
FamilySolver = Callable[[Any], tuple[np.ndarray, dict[str, Any]]]
FAMILY_SOLVERS: Registry[FamilySolver] = Registry("numpy family solver",
                                                  plugins="casekit.tracks.numpy.solvers.families")


def for_forms(kind: type, *, exclude: tuple[str, ...] = ()) -> Callable[[FamilySolver], FamilySolver]:
    """Register a solver for every family whose form is of ``kind`` (but ``exclude``)."""
    from casekit.solvers.forms import FORMS

    def deco(fn: FamilySolver) -> FamilySolver:
        for name, form in FORMS.items():
            if isinstance(form, kind) and name not in exclude:
                FAMILY_SOLVERS.register(name, fn)
        return fn

    return deco


def solve(case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
    from casekit.solvers.artifacts import OutputGrid
    from casekit.tracks.numpy.solvers.box import Box

    start = time.perf_counter()
    box = Box(case_spec, settings)
    u, info = FAMILY_SOLVERS.get(case_spec["pde"]["type"])(box)
    grid = OutputGrid(case_spec)
    pts = grid.points[grid.inside]
    values = (np.column_stack([box.sample(u[:, i], pts) for i in range(u.shape[1])]) if u.ndim == 2
              else box.sample(u, pts))
    info = {"grid": list(box.counts), "unknowns": int(box.free.sum()) * (u.shape[1] if u.ndim == 2 else 1), **info}
    if case_spec.get("targets"):
        from casekit.solvers.targets import write
        from casekit.tracks.numpy.solvers.targets import compute

        write(compute(box, u, pts))
    grid.write(grid.assemble(values), time.perf_counter() - start, info)
