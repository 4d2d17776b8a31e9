"""The inversion battery: fields computed from the agent view alone, without solving.

Every valid case must reject them at the accuracy gate (and every target gate).  Each
*inverter* is one module under :mod:`casekit.solvers.baselines.inverters` that registers itself
in :data:`INVERTERS`; it sees only what an agent sees (the case_spec, through
:class:`~casekit.solvers.baselines.view.AgentView`) and returns values of the leading unknown on
the evaluation grid.  The five trivial baselines (zero field, Dirichlet data extended, initial
data as the answer, forcing as the answer) are inverters too; the others read the answer off
the data as a hostile submission would: the initial data scaled by a ratio read off a boundary
datum, the forcing scaled, the forcing's time coefficients, its ``exp``/``tanh`` factors, a
polynomial fitted to the boundary data, and every visible span fitted to the boundary data.

This package is part of the sandbox runtime (numpy, casekit's expression and domain modules,
and sympy for the inverters that take expressions apart; no FEM library): the build scores the
inverters in-process, ``casekit baselines`` writes them as submissions.  Adding an inverter is
one module (``docs/adding-an-inverter.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from casekit.registry import Registry
from casekit.solvers.baselines.view import AgentView


@dataclass(frozen=True)
class Inverter:
    name: str
    doc: str
    #: the values of the leading unknown at every grid point, (N,) or (N, k)
    values: Callable[[AgentView], np.ndarray]
    #: whether the case gives what the inverter reads (e.g. initial data)
    applies: Callable[[AgentView], bool] = lambda view: True


INVERTERS: Registry[Inverter] = Registry("inverter", plugins="casekit.solvers.baselines.inverters")


def register(inverter: Inverter) -> Inverter:
    return INVERTERS.register(inverter.name, inverter)


def kinds() -> tuple[str, ...]:
    """The registered inverters' names, sorted."""
    return tuple(INVERTERS.names())


def applicable(kind: str, case_spec: dict[str, Any]) -> bool:
    return INVERTERS.get(kind).applies(AgentView(case_spec))


def arrays(kind: str, case_spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """The inverter's output arrays on the evaluation grid (NaN outside the domain)."""
    inverter = INVERTERS.get(kind)
    view = AgentView(case_spec)
    with np.errstate(all="ignore"):
        values = np.asarray(inverter.values(view), dtype=float)
    return output_arrays(view, values)


def output_arrays(view: AgentView, values: np.ndarray) -> dict[str, np.ndarray]:
    """Values of the leading unknown at every grid point, (N,) or (N, k), as the output arrays on
    the evaluation grid (a magnitude from components; NaN outside the domain)."""
    values = np.asarray(values, dtype=float)
    comps = view.components
    if comps:
        v2 = values if values.ndim == 2 else np.repeat(values[:, None], len(comps), axis=1)
        cols = {c: v2[:, i] for i, c in enumerate(comps)}
    else:
        cols = {"u": np.linalg.norm(values, axis=1) if values.ndim == 2 else values}
    return {name: np.where(view.inside, col, np.nan).reshape(view.grid.shape) for name, col in cols.items()}


def solve(case_spec: dict[str, Any], kind: str) -> None:
    """Write the inverter's artifacts (``solution.npz``, ``meta.json``) like a submission."""
    import json

    from casekit.solvers import targets

    view = AgentView(case_spec)
    fields = arrays(kind, case_spec)
    np.savez("solution.npz", **view.grid.axes(), **fields)  # type: ignore[arg-type]
    if case_spec.get("targets"):
        targets.write(targets.from_grid(case_spec, fields, view.points))
    with open("meta.json", "w", encoding="utf-8") as fh:
        json.dump({"wall_time_sec": 0.0, "status": "ok", "solver_info": {"baseline": kind}}, fh)


__all__ = ["INVERTERS", "AgentView", "Inverter", "applicable", "arrays", "kinds", "register", "solve"]
