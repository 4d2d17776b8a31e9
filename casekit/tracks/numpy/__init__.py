"""The numpy track (NumPy/SciPy (no FEM library)): written by ``casekit track new``; see docs/adding-a-track.md.

It starts as a working track: a second-order finite-difference solver for the Poisson equation
with Dirichlet data on the unit square, in casekit's own interpreter (NumPy and SciPy).  Replace
the solvers with your library's, widen ``families`` and ``domains`` as solvers arrive (the
coverage test checks them against the solvers), and the environment recipe with your library's.
"""

from __future__ import annotations

from dataclasses import dataclass

from casekit.tracks.base import TRACKS, PythonTrack
from casekit.tracks.numpy import environment as _environment  # noqa: F401  (registers it)


@dataclass(frozen=True, kw_only=True)
class NumpyTrack(PythonTrack):
    def version_packages(self) -> tuple[str, ...]:
        return ("numpy", "scipy")


TRACKS.register("numpy", NumpyTrack(
    name="numpy",
    description="NumPy/SciPy (no FEM library)",
    title="NumPy/SciPy (no FEM library)",
    families=("poisson",),
    domains=("unit_square",),
    packages=(("numpy", "numpy"), ("scipy", "scipy")),
    preload=("numpy", "scipy.sparse.linalg"),
    solver_module="casekit.tracks.numpy.solvers",
    scaffold="scaffold.py.j2",
    convergence_rows=("poisson-unit_square-dirichlet",),
))
