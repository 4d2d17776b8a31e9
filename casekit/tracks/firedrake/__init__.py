"""The Firedrake track: Firedrake 2026.10 in its own environment (``casekit env install firedrake``).

Submissions are Python ``solve(case_spec)`` functions run by the same harness as DOLFINx's, with
the Firedrake environment's interpreter.  Calibration runs casekit's Firedrake solvers
(``casekit/solvers/firedrake``) on the mesh casekit writes from its domain registry
(``calibration_mesh.msh``, gmsh 2.2 with the tags' ids), so the geometry and boundary tags are
those of every other track.  Periodic cases are the exception: a gmsh-read mesh cannot be made
periodic in Firedrake, so the periodic square is meshed by Firedrake's ``PeriodicRectangleMesh``
(the same rectangle and pairs, the same h).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casekit.tracks.base import FAMILY_NAMES, TRACKS, PythonTrack
from casekit.tracks.firedrake import environment as _environment  # (registers it)


@dataclass(frozen=True, kw_only=True)
class FiredrakeTrack(PythonTrack):
    def python(self) -> Path:
        from casekit.envs import ENVIRONMENTS

        return ENVIRONMENTS.get("firedrake").python()  # type: ignore[attr-defined, no-any-return]

    def status(self) -> tuple[bool, str]:
        from casekit.envs import ENVIRONMENTS

        env = ENVIRONMENTS.get("firedrake").check()
        return (True, "ok") if env.usable else (False, env.reason)

    def version_packages(self) -> tuple[str, ...]:
        return ("firedrake", "petsc4py", "fenics-ufl", "firedrake-fiat", "mpi4py", "numpy")

    def calibration_files(self, settings: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, bytes]:
        from casekit.domains.msh22 import mesh_text
        from casekit.solvers.settings import SolveSettings

        st = SolveSettings.from_dict(settings)
        files = super().calibration_files(settings, case_spec)
        files["calibration_mesh.msh"] = mesh_text(case_spec, st.cells_across, st.cell,
                                                       st.corner_refinement).encode()
        return files

    def calibration_submission(self, settings: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, bytes]:
        """One ``solver.py`` that writes its mesh file, then runs the calibration."""
        files = self.calibration_files(settings, case_spec)
        data = {name: files[name].decode() for name in ("calibration_mesh.msh",)}
        source = files["solver.py"].decode().replace(
            "def solve(case_spec):\n",
            "_FILES = " + repr(data) + "\n\n\ndef solve(case_spec):\n"
            "    for _name, _text in _FILES.items():\n"
            "        with open(_name, 'w', encoding='utf-8') as _fh:\n"
            "            _fh.write(_text)\n", 1)
        return {"solver.py": source.encode()}


TRACKS.register("firedrake", FiredrakeTrack(
    name="firedrake",
    description="Firedrake 2026.10 on PETSc 3.26 (built from PyPI sources against Debian's libraries)",
    title="Firedrake",
    convergence_rows=("poisson-unit_square-robin", "poisson-periodic_square", "poisson-ellipse-mixed",
                      "heat-annulus-mixed", "linear_elasticity-circle", "stokes-unit_square-mixed",
                      "wave-unit_square-mixed"),
    scaffold="scaffold.py.j2",
    families=FAMILY_NAMES,
    packages=(("firedrake", "Firedrake 2026.10"), ("petsc4py", "petsc4py (PETSc 3.26 with MUMPS)"),
              ("ufl", "ufl"), ("mpi4py", "mpi4py"), ("numpy", "numpy"), ("scipy", "scipy"),
              ("gmsh", "gmsh (Python API)"), ("sympy", "sympy")),
    unavailable=(("netgen", "netgen / ngsPETSc"), ("pyvista", "pyvista")),
    preload=("firedrake",),
    solver_module="casekit.tracks.firedrake.solvers",
    # the kinds solvers/targets.py registers (a test reads that registry in the environment)
    target_kinds=("boundary_flux", "max", "mean", "point"),
    extra_env={"OMPI_MCA_plm": "isolated", "OMPI_MCA_btl": "self,vader",
               "OMPI_MCA_rmaps_base_oversubscribe": "1"},
    cache_env=_environment.JIT_CACHE_ENV,
))
