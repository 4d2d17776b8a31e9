"""The ngsolve track (NGSolve 6.2): written by ``casekit track new``; see docs/adding-a-track.md.

It starts as a working track: a second-order finite-difference solver for the Poisson equation
with Dirichlet data on the unit square, in casekit's own interpreter (NumPy and SciPy).  Replace
the solvers with your library's, widen ``families`` and ``domains`` as solvers arrive (the
coverage test checks them against the solvers), and the environment recipe with your library's.
"""

from __future__ import annotations

from dataclasses import dataclass

from casekit.tracks.base import TRACKS, PythonTrack
from casekit.tracks.ngsolve import environment as _environment  # noqa: F401  (registers it)


@dataclass(frozen=True, kw_only=True)
class NgsolveTrack(PythonTrack):
    def version_packages(self) -> tuple[str, ...]:
        return ("numpy", "scipy")


TRACKS.register("ngsolve", NgsolveTrack(
    name="ngsolve",
    description="NGSolve 6.2",
    title="NGSolve 6.2",
    families=("poisson",),
    domains=("unit_square",),
    packages=(("numpy", "numpy"), ("scipy", "scipy")),
    preload=("numpy", "scipy.sparse.linalg"),
    solver_module="casekit.tracks.ngsolve.solvers",
    scaffold="scaffold.py.j2",
    convergence_rows=("poisson-unit_square-dirichlet",),
))
