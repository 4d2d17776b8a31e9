"""The inversion battery scored against a reference: which inverter (``casekit.solvers.baselines``)
comes within a relative L2 error of the answer, using only the agent view.

Validation scores the battery against the manufactured solution with the gap
:data:`casekit.validate.span.SPAN_GAP_MIN` (tau_acc is not known before the build); the build's
trial scores it against the reference with tau_acc and every target's tau.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.scoring import metrics
from casekit.solvers.baselines import applicable, arrays, kinds


class InverterError(Exception):
    """An inverter could not be scored: the case cannot be shown to reject it."""


def score(spec: dict[str, Any], ref: dict[str, np.ndarray], mask: np.ndarray
          ) -> dict[str, tuple[dict[str, np.ndarray], float | None]]:
    """kind -> (its arrays, its relative L2 error, or None when it writes non-finite values
    inside the domain, which the artifact check refuses), for every applicable inverter."""
    out: dict[str, tuple[dict[str, np.ndarray], float | None]] = {}
    for kind in kinds():
        try:
            if not applicable(kind, spec):
                continue
            values = arrays(kind, spec)
            finite = all(bool(np.isfinite(a[mask]).all()) for a in values.values())
            out[kind] = (values, metrics.rel_l2(values, ref, mask) if finite else None)
        except Exception as exc:  # fail closed: an inverter that cannot be scored stops the case
            raise InverterError(f"the inverter {kind!r} could not be scored, so the case cannot be shown to "
                                f"reject it: {type(exc).__name__}: {exc}") from None
    return out


def exact_arrays(spec: dict[str, Any], solution: Any, kind: str, names: list[str], t: float,
                 points: np.ndarray, mask: np.ndarray, dim: int) -> dict[str, np.ndarray]:
    """The hidden output on the grid from a manufactured solution (NaN outside ``mask``)."""
    from casekit import leak

    flat = np.ravel(mask)
    values = leak.evaluate(solution, points[flat], t, dim)
    columns = [values[:, i] for i in range(values.shape[1])] if kind == "components" else [
        leak.output_values(values, kind)]
    out = {}
    for name, column in zip(names, columns, strict=True):
        full = np.full(flat.size, np.nan)
        full[flat] = column
        out[name] = full.reshape(mask.shape)
    return out


def magnitude_components(solution: Any, kind: str, t: float, points: np.ndarray, mask: np.ndarray,
                         dim: int) -> dict[str, np.ndarray] | None:
    """The components behind a magnitude output on the grid (NaN outside ``mask``), for the span
    check's fit per component (``casekit.validate.span``); None for any other output."""
    if kind != "magnitude":
        return None
    names = [f"c{i}" for i in range(len(solution))]
    return exact_arrays({}, solution, "components", names, t, points, mask, dim)


def target_errors(spec: dict[str, Any], values: dict[str, float], mask: np.ndarray,
                  points: np.ndarray) -> dict[tuple[str, str], float]:
    """(inverter kind, target name) -> the relative error of the target value the inverter
    reports (estimated from its grid arrays, as the build's trial and the trivial baselines do),
    for every applicable inverter whose arrays are finite inside the domain."""
    from casekit.solvers.targets import from_grid

    out: dict[tuple[str, str], float] = {}
    for kind in kinds():
        try:
            if not applicable(kind, spec):
                continue
            grid = arrays(kind, spec)
            if not all(bool(np.isfinite(a[mask]).all()) for a in grid.values()):
                continue  # refused by the artifact check before its targets count
            estimates = from_grid(spec, grid, points)
        except Exception as exc:  # fail closed, as score() does
            raise InverterError(f"the inverter {kind!r} could not be scored, so the case cannot be shown to "
                                f"reject it: {type(exc).__name__}: {exc}") from None
        for name, exact in values.items():
            out[(kind, name)] = metrics.rel_scalar(estimates[name], exact)
    return out
