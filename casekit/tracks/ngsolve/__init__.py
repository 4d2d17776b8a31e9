"""The NGSolve track: NGSolve 6.2 (with netgen) from PyPI, in its own environment
(``casekit env install ngsolve``).

Submissions are Python ``solve(case_spec)`` functions run by the same harness as the other
Python tracks, with the NGSolve environment's interpreter.  Calibration runs casekit's NGSolve
solvers (``solvers/``): netgen meshes the domain registry's own geometry (lines and circular arcs
as OCC edges named by their boundary tags, periodic pairs identified) with cells curved onto the
exact curves, and each kind of weak form of ``casekit.solvers.forms`` has one solver.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from casekit.tracks.base import FAMILY_NAMES, TRACKS, PythonTrack
from casekit.tracks.ngsolve import environment as _environment  # noqa: F401  (registers it)


@dataclass(frozen=True, kw_only=True)
class NgsolveTrack(PythonTrack):
    def python(self) -> Path:
        from casekit.envs import ENVIRONMENTS

        return ENVIRONMENTS.get("ngsolve").python()  # type: ignore[attr-defined, no-any-return]

    def status(self) -> tuple[bool, str]:
        from casekit.envs import ENVIRONMENTS

        env = ENVIRONMENTS.get("ngsolve").check()
        return (True, "ok") if env.usable else (False, env.reason)

    def version_packages(self) -> tuple[str, ...]:
        return ("ngsolve", "netgen-mesher", "numpy", "scipy", "sympy")


TRACKS.register("ngsolve", NgsolveTrack(
    name="ngsolve",
    description="NGSolve 6.2.2608 (netgen meshing, UMFPACK) from PyPI",
    title="NGSolve 6.2",
    families=FAMILY_NAMES,
    packages=(("ngsolve", "NGSolve 6.2 (ngsolve)"), ("netgen", "netgen (meshing, OCC geometry)"),
              ("numpy", "numpy"), ("scipy", "scipy"), ("sympy", "sympy")),
    unavailable=(("dolfinx", "DOLFINx"), ("petsc4py", "petsc4py"), ("gmsh", "gmsh (use netgen)")),
    preload=("ngsolve", "netgen.occ", "numpy"),
    solver_module="casekit.tracks.ngsolve.solvers",
    # the kinds solvers/targets.py registers (a test reads that registry in the environment)
    target_kinds=("boundary_flux", "max", "mean", "point"),
    scaffold="scaffold.py.j2",
))
