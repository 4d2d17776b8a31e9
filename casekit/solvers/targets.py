"""Target values on the solver side (sandbox runtime: numpy and casekit's grid only).

A submission to a case with ``targets`` in its case_spec writes ``targets.json`` -- one number
per target name -- next to ``solution.npz``.  :func:`write` does that for casekit's own solvers;
:func:`from_grid` estimates each kind from output arrays on the evaluation grid alone (what the
trivial baselines report: no solve, no derivative information, so a boundary flux is 0).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from casekit.registry import Registry

TARGETS_FILE = "targets.json"

GridEstimate = Callable[[dict[str, Any], np.ndarray, np.ndarray], float]
#: kind -> estimate(entry, values of the quantity on the grid (NaN outside), grid points)
GRID_ESTIMATES: Registry[GridEstimate] = Registry("grid estimate of a target kind")


def quantity(entry: dict[str, Any], arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The grid values of the quantity a target is about (``of``: the field or a component)."""
    of = entry.get("of")
    return np.asarray(arrays[of] if of in arrays else arrays["u"], dtype=float)


def _mean(entry: dict[str, Any], values: np.ndarray, points: np.ndarray) -> float:
    return float(np.nanmean(values))


def _max(entry: dict[str, Any], values: np.ndarray, points: np.ndarray) -> float:
    return float(np.nanmax(values))


def _point(entry: dict[str, Any], values: np.ndarray, points: np.ndarray) -> float:
    flat = values.reshape(-1)
    ok = np.isfinite(flat)
    d = np.linalg.norm(points[ok] - np.asarray(entry["at"], dtype=float), axis=1)
    return float(flat[ok][int(np.argmin(d))])


def _flux(entry: dict[str, Any], values: np.ndarray, points: np.ndarray) -> float:
    return 0.0


for _name, _fn in (("mean", _mean), ("max", _max), ("point", _point), ("boundary_flux", _flux)):
    GRID_ESTIMATES.register(_name, _fn)


def from_grid(case_spec: dict[str, Any], arrays: dict[str, np.ndarray], points: np.ndarray) -> dict[str, float]:
    """Every target of the case estimated from grid arrays (``points``: the grid's points in
    the arrays' flattened order)."""
    return {e["name"]: GRID_ESTIMATES.get(e["kind"])(e, quantity(e, arrays), points)
            for e in case_spec.get("targets", [])}


def write(values: dict[str, float]) -> None:
    """targets.json in the working directory (only when the case asks for targets)."""
    clean = {str(k): float(v) for k, v in values.items()}
    bad = [k for k, v in clean.items() if not math.isfinite(v)]
    if bad:
        raise ValueError(f"target values are not finite: {', '.join(bad)}")
    with open(TARGETS_FILE, "w", encoding="utf-8") as fh:
        json.dump(clean, fh)
