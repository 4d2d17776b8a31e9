"""The numpy track's environment: NumPy, SciPy (and what casekit's runtime modules need: SymPy,
jsonschema) pinned in a venv of its own -- no FEM library is importable there, which is the
point of the track (casekit's own venv carries DOLFINx); a smoke solve checks it."""

from __future__ import annotations

from casekit.envs.base import ENVIRONMENTS, PinnedVenvEnvironment

PINS = ("numpy==2.5.5", "scipy==1.18.1", "sympy==1.14.0", "jsonschema==4.26.0")

#: a second-order finite-difference Poisson solve; the FEM libraries must not be importable
_SMOKE = """
import importlib.util, json
import numpy as np, scipy, scipy.sparse as sps, scipy.sparse.linalg as spla
present = [m for m in ("dolfinx", "firedrake", "ngsolve", "skfem", "gmsh") if importlib.util.find_spec(m)]
assert not present, f"FEM libraries in the numpy environment: {present}"
n = 32
h = 1.0 / n
x = np.linspace(0, 1, n + 1)[1:-1]
X, Y = np.meshgrid(x, x, indexing="ij")
d = sps.diags([-np.ones(n - 2), 2 * np.ones(n - 1), -np.ones(n - 2)], [-1, 0, 1]) / h**2
A = sps.kronsum(d, d, format="csc")
exact = np.sin(np.pi * X) * np.sin(np.pi * Y)
u = spla.spsolve(A, (2 * np.pi**2 * exact).ravel())
err = float(np.abs(u - exact.ravel()).max())
assert err < 2e-3, err
print(json.dumps({"numpy": np.__version__, "scipy": scipy.__version__, "smoke_max_error": err}))
"""


class NumpyEnvironment(PinnedVenvEnvironment):
    name = "numpy"
    description = "NumPy and SciPy (no FEM library) from PyPI in their own venv"
    image = "casekit/numpy:latest"
    pins = PINS
    smoke = _SMOKE
    imports = "numpy, scipy.sparse.linalg, sympy"
    python_override = "CASEKIT_NUMPY_PYTHON"


ENVIRONMENTS.register("numpy", NumpyEnvironment())
