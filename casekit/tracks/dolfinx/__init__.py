"""The DOLFINx track: DOLFINx 0.11 from the ``dolfinx-solver-real`` wheel, in casekit's own venv."""

from __future__ import annotations

from dataclasses import dataclass

from casekit.tracks.base import FAMILY_NAMES, TRACKS, PythonTrack
from casekit.tracks.dolfinx import environment as _environment  # noqa: F401  (registers it)


@dataclass(frozen=True, kw_only=True)
class DolfinxTrack(PythonTrack):
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
    # every library of the track a solver is likely to import, sympy included (casekit's own
    # calibration parses expressions with it: its import, 0.5-1 s, is no part of a FEM solve)
    preload=("dolfinx_solver", "dolfinx", "dolfinx.fem.petsc", "ufl", "basix", "numpy", "sympy"),
    solver_module="casekit.tracks.dolfinx.solvers",
))
