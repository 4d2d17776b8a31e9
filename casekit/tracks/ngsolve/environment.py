"""NGSolve 6.2 from its PyPI wheels (netgen included), in a venv of its own with what casekit's
runtime modules need (NumPy, SciPy, SymPy, jsonschema); a smoke solve checks it."""

from __future__ import annotations

from casekit.envs.base import ENVIRONMENTS, PinnedVenvEnvironment

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


class NgsolveEnvironment(PinnedVenvEnvironment):
    name = "ngsolve"
    description = "NGSolve 6.2.2608 (netgen, UMFPACK) from PyPI in its own venv"
    image = "casekit/ngsolve:6.2"
    pins = PINS
    smoke = _SMOKE
    imports = "ngsolve, netgen.occ"
    python_override = "CASEKIT_NGSOLVE_PYTHON"


ENVIRONMENTS.register("ngsolve", NgsolveEnvironment())
