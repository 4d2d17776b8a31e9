"""Helmholtz: -Laplace(u) - k^2 u = f (indefinite; direct solve)."""

from __future__ import annotations

from casekit.tracks.dolfinx.solvers import Result, family
from casekit.tracks.dolfinx.solvers.families.poisson import scalar_elliptic
from casekit.tracks.dolfinx.solvers.problem import Problem


@family("helmholtz")
def helmholtz(p: Problem) -> Result:
    k = float(p.spec["pde"]["params"]["k"])
    return scalar_elliptic(p, 1.0, -(k**2))
