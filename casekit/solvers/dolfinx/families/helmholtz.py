"""Helmholtz: -Laplace(u) - k^2 u = f (indefinite; direct solve)."""

from __future__ import annotations

from casekit.solvers.dolfinx import Result, family
from casekit.solvers.dolfinx.families.poisson import scalar_elliptic
from casekit.solvers.dolfinx.problem import Problem


@family("helmholtz")
def helmholtz(p: Problem) -> Result:
    k = float(p.spec["pde"]["params"]["k"])
    return scalar_elliptic(p, 1.0, -(k**2))
