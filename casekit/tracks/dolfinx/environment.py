"""DOLFINx 0.11 from the ``dolfinx-solver-real`` wheel, in casekit's own interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

from casekit.envs.base import ENVIRONMENTS, Environment, EnvStatus, Step

SPEC = "dolfinx-solver-real>=0.11,<0.12"


class Dolfinx(Environment):
    name = "dolfinx"
    description = "DOLFINx 0.11 (PETSc, MUMPS) from PyPI in casekit's interpreter"
    image = "casekit/dolfinx:0.11"

    def steps(self) -> list[Step]:
        return [Step("pip-install", (f"{sys.executable} -m pip install --quiet '{SPEC}'",))]

    def check(self) -> EnvStatus:
        code = ("import json, dolfinx_solver, dolfinx, petsc4py; "
                "print(json.dumps({'dolfinx': dolfinx.__version__, 'petsc4py': petsc4py.__version__}))")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["import failed"])[-1]
            return EnvStatus(self.name, False, f"cannot import DOLFINx: {last}")
        return EnvStatus(self.name, True, details={**json.loads(r.stdout), "python": sys.executable})


ENVIRONMENTS.register("dolfinx", Dolfinx())
