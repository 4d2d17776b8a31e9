"""References on the evaluation grid: the manufactured solution sampled exactly, or a
numerical reference from finer solves (levels L1 and L2 of the case's reference recipe)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from casekit import leak
from casekit.derive import Derived
from casekit.scoring.artifacts import output_names
from casekit.unscored import scored_mask


def grid_mask(d: Derived) -> np.ndarray:
    """The points every error of the build is computed on: the evaluator's (casekit.unscored)."""
    return scored_mask(d.case_spec(), d.case_id)


def manufactured(d: Derived) -> dict[str, np.ndarray]:
    """The hidden solution's output field(s) on the grid, NaN outside the exact domain."""
    assert d.solution is not None
    pts = d.grid.points()
    mask = d.grid.mask(d.domain.inside).ravel()  # as the evaluator samples it: every point inside
    values = leak.evaluate(d.solution[d.output.of], pts[mask], d.t_out, d.dim)
    names = output_names(d.case_spec())
    out = {}
    if d.output.kind == "components":
        for i, n in enumerate(names):
            out[n] = _fill(values[:, i], mask, d.grid.shape)
    else:
        out[names[0]] = _fill(leak.output_values(values, d.output.kind), mask, d.grid.shape)
    return out


def _fill(values: np.ndarray, mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    full = np.full(mask.size, np.nan)
    full[mask] = values
    return full.reshape(shape)


def describe_manufactured() -> dict[str, Any]:
    return {"method": "manufactured solution sampled on the grid"}


def load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {k: np.asarray(data[k]) for k in data.files if k not in ("x", "y", "z")}
