"""Writing the canonical artifacts of a Python-track solver (numpy only, no FEM library).

``solution.npz`` holds the grid axes ``x``, ``y`` (``z``) and either ``u`` (a scalar output,
also magnitudes) or one array per output component; points outside the exact domain are NaN.
``meta.json`` holds ``wall_time_sec``, ``status`` and ``solver_info``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from casekit.domains import resolve
from casekit.grid import Grid


class OutputGrid:
    """The case's evaluation grid with its exact-domain mask."""

    def __init__(self, case_spec: dict[str, Any]) -> None:
        self.spec = case_spec
        self.grid = Grid.from_spec(case_spec["eval_grid"])
        dom = case_spec["domain"]
        self.domain = resolve(dom["type"], dom["geometry_params"], validated=True)
        self.points = self.grid.points()
        self.inside = self.domain.inside(self.points)

    def assemble(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """Output arrays from the unknown's values at the inside points (shape (n,) or (n, k))."""
        out = self.spec["output"]
        values = np.asarray(values, dtype=float)
        comps = out.get("components")
        arrays: dict[str, np.ndarray] = {}
        if comps:
            for i, name in enumerate(comps):
                arrays[name] = self._fill(values[:, i])
        elif values.ndim == 2:  # a magnitude of a vector unknown
            arrays["u"] = self._fill(np.linalg.norm(values, axis=1))
        else:
            arrays["u"] = self._fill(values)
        return arrays

    def _fill(self, inside_values: np.ndarray) -> np.ndarray:
        full = np.full(len(self.points), np.nan)
        full[self.inside] = inside_values
        return full.reshape(self.grid.shape)

    def write(self, arrays: dict[str, np.ndarray], wall_time: float, solver_info: dict[str, Any]) -> None:
        np.savez("solution.npz", **self.grid.axes(), **arrays)  # type: ignore[arg-type]  # numpy's stub matches **arrays to allow_pickle
        with open("meta.json", "w", encoding="utf-8") as fh:
            json.dump({"wall_time_sec": wall_time, "status": "ok", "solver_info": solver_info}, fh)
