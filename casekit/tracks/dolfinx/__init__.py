"""The DOLFINx track: DOLFINx 0.11 from the ``dolfinx-solver-real`` wheel, in a venv of its own
(``casekit env install dolfinx``; see ``environment.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from casekit.tracks.base import FAMILY_NAMES, TRACKS, PythonTrack
from casekit.tracks.dolfinx import environment as _environment  # noqa: F401  (registers it)


@dataclass(frozen=True, kw_only=True)
class DolfinxTrack(PythonTrack):
    def python(self) -> Path:
        from casekit.envs import ENVIRONMENTS

        return ENVIRONMENTS.get("dolfinx").python()  # type: ignore[attr-defined, no-any-return]

    def status(self) -> tuple[bool, str]:
        from casekit.envs import ENVIRONMENTS

        env = ENVIRONMENTS.get("dolfinx").check()
        return (True, "ok") if env.usable else (False, env.reason)

    def version_packages(self) -> tuple[str, ...]:
        return ("dolfinx-solver-real", "fenics-basix", "fenics-ffcx", "fenics-ufl", "mpi4py", "numpy", "gmsh")


TRACKS.register("dolfinx", DolfinxTrack(
    name="dolfinx",
    description="DOLFINx 0.11 (FEniCSx) from the dolfinx-solver-real wheel",
    title="DOLFINx 0.11",
    scaffold="scaffold.py.j2",
    families=FAMILY_NAMES,
    target_kinds=("boundary_flux", "max", "mean", "point"),
    packages=(("dolfinx", "DOLFINx 0.11 (import dolfinx_solver first)"),
              ("petsc4py", "petsc4py (real PETSc with MUMPS)"), ("basix", "basix"), ("ufl", "ufl"),
              ("ffcx", "ffcx"), ("mpi4py", "mpi4py"), ("numpy", "numpy"), ("scipy", "scipy"),
              ("gmsh", "gmsh (Python API)"), ("sympy", "sympy")),
    unavailable=(("dolfinx_mpc", "dolfinx_mpc (impose periodicity yourself: see the guide)"),
                 ("pyvista", "pyvista"), ("adios4dolfinx", "adios4dolfinx"), ("hypre", "hypre preconditioners")),
    # the FEM libraries every solver imports, before the timed region; anything else a solver
    # imports (sympy, scipy, gmsh) is its own choice and inside its timed region -- casekit's
    # calibration imports none of them (expressions: casekit.expr.syntax; rectangles and boxes
    # are gridded by DOLFINx, other shapes load gmsh inside the timed solve)
    preload=("dolfinx_solver", "dolfinx", "dolfinx.fem.petsc", "ufl", "basix", "numpy"),
    solver_module="casekit.tracks.dolfinx.solvers",
))
