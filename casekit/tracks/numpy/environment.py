"""The numpy track's environment: casekit's own interpreter with NumPy and SciPy.  A library
that needs its own installation gets steps here (see the Firedrake track's recipe)."""

from __future__ import annotations

import json
import subprocess
import sys

from casekit.envs.base import ENVIRONMENTS, Environment, EnvStatus, Step


class NumpyEnvironment(Environment):
    name = "numpy"
    description = "NumPy/SciPy (no FEM library) in casekit's interpreter"
    image = "casekit/numpy:latest"

    def steps(self) -> list[Step]:
        return [Step("pip-install", (f"{sys.executable} -m pip install --quiet numpy scipy",))]

    def check(self) -> EnvStatus:
        code = "import json, numpy, scipy; print(json.dumps({'numpy': numpy.__version__, 'scipy': scipy.__version__}))"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            return EnvStatus(self.name, False, (r.stderr.strip().splitlines() or ["import failed"])[-1])
        return EnvStatus(self.name, True, details={**json.loads(r.stdout), "python": sys.executable})


ENVIRONMENTS.register("numpy", NumpyEnvironment())
