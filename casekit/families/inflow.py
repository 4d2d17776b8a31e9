"""Traction conditions where the flow enters: fair at low Reynolds numbers only.

A traction (do-nothing) condition lets kinetic energy in wherever the flow crosses it inward,
and the steady problem then loses the energy bound that makes it well posed.  At low Reynolds
numbers viscosity wins and every solver converges; above a few hundred the Stokes start and
viscosity continuation of a sound Newton solver stall at a turning point (two committed cases,
Re 975 and 1380, on DOLFINx: continuation to nu = 0.04 of 0.01, then no convergence), while
cases at Re 125 with inflow through traction parts build on every track.  A case an honest
solver cannot converge on measures nothing, so a family sets a limit
(``Family.traction_inflow_limit``): above it no traction part may carry inflow.

The Reynolds number is ``U L / nu`` with ``U`` the largest speed on the boundary and ``L`` the
domain's diameter; inflow is ``u . n < -INFLOW_TOL U`` at a point of the part.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from casekit.expr import X, Y, Z

#: inflow weaker than this fraction of the boundary's largest speed is not counted
INFLOW_TOL = 0.01


@dataclass(frozen=True)
class Inflow:
    tag: str
    worst: float  # min over the part of u . n / U
    reynolds: float
    limit: float

    def message(self) -> str:
        return (f"the flow enters through the traction part {self.tag!r} (u . n down to {self.worst:+.2f} of the "
                f"largest boundary speed) at Reynolds number {self.reynolds:.0f} > {self.limit:.0f}: the steady "
                "problem is not well posed there and no sound solver converges")


def _speeds(u: Sequence[Any], pts: np.ndarray) -> np.ndarray:
    coords = (X, Y, Z)[: pts.shape[1]]
    fn = sp.lambdify(coords, [sp.sympify(c) for c in u], "numpy")
    return np.stack(np.broadcast_arrays(*fn(*pts.T), pts[:, 0])[:-1], axis=1).astype(float)


def traction_inflow(limit: tuple[str, float] | None, params: dict[str, Any], u: Sequence[Any] | None,
                    geometry: Any, tags: Iterable[str]) -> list[Inflow]:
    """The traction parts among ``tags`` where ``u`` (the velocity, sympy or text, steady) enters
    although the Reynolds number is above the family's limit."""
    if limit is None or u is None:
        return []
    name, bound = limit
    try:
        nu = float(params[name])
    except (KeyError, TypeError, ValueError):  # a field or missing viscosity: reported elsewhere
        return []
    every = geometry.tags()
    speed = max(float(np.max(np.linalg.norm(_speeds(u, geometry.tag_points(t)), axis=1))) for t in every)
    if speed == 0 or nu <= 0:
        return []
    reynolds = speed * geometry.diameter() / nu
    if reynolds <= bound:
        return []
    out = []
    for tag in tags:
        un = np.sum(_speeds(u, geometry.tag_points(tag)) * geometry.tag_normals(tag), axis=1) / speed
        if un.min() < -INFLOW_TOL:
            out.append(Inflow(tag, float(un.min()), reynolds, bound))
    return out
