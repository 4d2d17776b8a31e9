"""The numpy track: library-free solvers in plain NumPy and SciPy (CodePDE style: no FEM
library), in an environment of its own (``casekit env install numpy``; no FEM library is
importable there).

Submissions are Python ``solve(case_spec)`` functions run by the same harness as the other
Python tracks.  The track covers the structured domains (rectangles, the periodic square and
boxes) and the families a plain finite-difference or finite-volume solver handles well: scalar
second-order equations (steady, transient, nonlinear), the biharmonic equation as two Poisson
solves, the wave equation, linear elasticity and incompressible flow (Stokes, steady Navier-Stokes) on a
staggered (MAC) grid -- velocity components on the cell faces, pressure at the centres -- which
is sound on every domain of the track: the unit square, the periodic square (a periodic pair
wraps the staggered grid around; a flow periodic in both directions has no velocity datum and is
refused) and the unit cube.  Calibration runs casekit's own such solvers (``solvers/``): a uniform
node grid (the MAC cells between its nodes), second order in space and time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from casekit.tracks.base import TRACKS, PythonTrack
from casekit.tracks.numpy import environment as _environment  # noqa: F401  (registers it)


@dataclass(frozen=True, kw_only=True)
class NumpyTrack(PythonTrack):
    def python(self) -> Path:
        from casekit.envs import ENVIRONMENTS

        return ENVIRONMENTS.get("numpy").python()  # type: ignore[attr-defined, no-any-return]

    def status(self) -> tuple[bool, str]:
        from casekit.envs import ENVIRONMENTS

        env = ENVIRONMENTS.get("numpy").check()
        return (True, "ok") if env.usable else (False, env.reason)

    def version_packages(self) -> tuple[str, ...]:
        return ("numpy", "scipy", "sympy")


TRACKS.register("numpy", NumpyTrack(
    name="numpy",
    description="NumPy 2.5 and SciPy 1.18 (sparse direct solvers), no FEM library, in their own venv",
    title="NumPy/SciPy (no FEM library)",
    families=("poisson", "heat", "convection_diffusion", "reaction_diffusion", "helmholtz", "biharmonic", "wave",
              "burgers", "linear_elasticity", "stokes", "navier_stokes"),
    domains=("unit_square", "periodic_square", "unit_cube"),
    packages=(("numpy", "numpy"), ("scipy", "scipy (scipy.sparse, scipy.sparse.linalg, scipy.interpolate)")),
    unavailable=(("dolfinx", "DOLFINx"), ("firedrake", "Firedrake"), ("ngsolve", "NGSolve"),
                 ("skfem", "scikit-fem"), ("gmsh", "gmsh")),
    preload=("numpy", "scipy.sparse.linalg", "scipy.interpolate"),
    solver_module="casekit.tracks.numpy.solvers",
    # the kinds solvers/targets.py registers (a test reads that registry in the environment)
    target_kinds=("boundary_flux", "max", "mean", "point"),
    scaffold="scaffold.py.j2",
    # the second-order rows (degree 1) of the shared matrix; the unit cube's are the track's own tests
    convergence_rows=("poisson-unit_square-dirichlet", "heat-unit_square-mixed", "burgers-unit_square-mixed",
                      "wave-unit_square-mixed", "poisson-periodic_square-robin", "helmholtz-periodic_square-robin",
                      "biharmonic-periodic_square", "convection_diffusion-periodic_square-mixed",
                      "reaction_diffusion-periodic_square-robin", "wave-periodic_square",
                      "linear_elasticity-periodic_square-mixed", "stokes-unit_square-dirichlet",
                      "navier_stokes-unit_square-dirichlet", "stokes-periodic_square-mixed"),
))
