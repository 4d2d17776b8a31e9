"""NGSolve 6.2 from its PyPI wheels (netgen included), in a venv of its own with what casekit's
runtime modules need (NumPy, SciPy, SymPy, jsonschema); a smoke solve checks it."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from casekit.envs.base import ENVIRONMENTS, Environment, EnvStatus, Step, find_python

PINS = ("ngsolve==6.2.2608", "netgen-mesher==6.2.2608", "numpy==2.5.5", "scipy==1.18.1", "sympy==1.14.0",
        "jsonschema==4.26.0")

_SMOKE = """
import json
import ngsolve as ng
from netgen import occ
face = occ.WorkPlane().Rectangle(1, 1).Face()
face.edges.name = "boundary"
mesh = ng.Mesh(occ.OCCGeometry(face, dim=2).GenerateMesh(maxh=0.1))
fes = ng.H1(mesh, order=2, dirichlet="boundary")
u, v = fes.TnT()
exact = ng.sin(ng.pi * ng.x) * ng.sin(ng.pi * ng.y)
a = ng.BilinearForm(ng.grad(u) * ng.grad(v) * ng.dx).Assemble()
f = ng.LinearForm(2 * ng.pi**2 * exact * v * ng.dx).Assemble()
gfu = ng.GridFunction(fes)
gfu.vec.data = a.mat.Inverse(fes.FreeDofs(), inverse="umfpack") * f.vec
err = ng.sqrt(ng.Integrate((gfu - exact) ** 2, mesh))
assert err < 1e-3, err
print(json.dumps({"ngsolve": ng.__version__, "smoke_l2_error": err}))
"""


class NgsolveEnvironment(Environment):
    name = "ngsolve"
    description = "NGSolve 6.2.2608 (netgen, UMFPACK) from PyPI in its own venv"
    image = "casekit/ngsolve:6.2"

    def recipe(self) -> object:
        return {"pins": PINS, "python": "3.12", "smoke": _SMOKE}

    def venv(self) -> Path:
        return self.state_dir() / "venv"

    def python(self) -> Path:
        return self.venv() / "bin" / "python"

    def steps(self) -> list[Step]:
        pip = f"{self.python()} -m pip install --no-input --quiet"
        return [
            Step("venv", (f"{find_python('3.12', 'CASEKIT_NGSOLVE_PYTHON')} -m venv --clear {self.venv()}",)),
            Step("wheels", (f"{pip} " + " ".join(f"'{p}'" for p in PINS),
                            f"{self.python()} -m pip freeze > {self.state_dir() / 'freeze.txt'}")),
            Step("smoke", (f"{self.python()} -c {shlex.quote(_SMOKE)} > {self.state_dir() / 'smoke.json'}",)),
        ]

    def check(self) -> EnvStatus:
        smoke = self.state_dir() / "smoke.json"
        if not self.python().exists():
            return EnvStatus(self.name, False, "not installed", {"install": "casekit env install ngsolve",
                                                                 "location": str(self.state_dir())})
        if not smoke.exists():
            return EnvStatus(self.name, False, "installed but the smoke solve has not passed",
                             {"location": str(self.state_dir())})
        r = subprocess.run([str(self.python()), "-c", "import ngsolve, netgen.occ"], capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            return EnvStatus(self.name, False, "cannot import ngsolve: " + (r.stderr.strip().splitlines() or [""])[-1])
        return EnvStatus(self.name, True, details={**json.loads(smoke.read_text()), "python": str(self.python())})


ENVIRONMENTS.register("ngsolve", NgsolveEnvironment())
