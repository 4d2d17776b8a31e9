"""DOLFINx 0.11 from the ``dolfinx-solver-real`` wheel, in a venv of its own holding only what a
DOLFINx submission may use (the track's ``packages``: DOLFINx with PETSc and MUMPS, basix, UFL,
FFCx, mpi4py, NumPy, SciPy, gmsh, SymPy); a smoke solve checks it.

A venv of its own rather than casekit's: every run imports DOLFINx before its timed region, and
``dolfinx_solver`` reads the metadata of every installed distribution when it is imported (to
refuse a foreign PETSc) -- 0.1 s of each run in casekit's venv of 160 distributions, and a
submission would see casekit's own dependencies (Dask, Inspect, Jinja...) as importable.  The
project venv keeps its own DOLFINx (``casekit[dolfinx]``) for in-process use: benchmarks and the
anchor comparison.
"""

from __future__ import annotations

from casekit.envs.base import ENVIRONMENTS, PinnedVenvEnvironment

PINS = ("dolfinx-solver-real==0.11.0.post0", "numpy==2.5.5", "scipy==1.18.1", "sympy==1.14.0", "gmsh==4.15.2")

_SMOKE = """
import json
import dolfinx_solver
import dolfinx, dolfinx.fem.petsc, ufl
import numpy as np
from mpi4py import MPI
mesh = dolfinx.mesh.create_unit_square(MPI.COMM_WORLD, 16, 16)
V = dolfinx.fem.functionspace(mesh, ("Lagrange", 2))
x = ufl.SpatialCoordinate(mesh)
exact = ufl.sin(ufl.pi * x[0]) * ufl.sin(ufl.pi * x[1])
u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
facets = dolfinx.mesh.locate_entities_boundary(mesh, 1, lambda p: np.full(p.shape[1], True))
bc = dolfinx.fem.dirichletbc(0.0, dolfinx.fem.locate_dofs_topological(V, 1, facets), V)
problem = dolfinx.fem.petsc.LinearProblem(
    ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx, 2 * ufl.pi**2 * exact * v * ufl.dx, bcs=[bc],
    petsc_options={"ksp_type": "preonly", "pc_type": "lu", "pc_factor_mat_solver_type": "mumps"},
    petsc_options_prefix="smoke_")
uh = problem.solve()
err = float(np.sqrt(mesh.comm.allreduce(dolfinx.fem.assemble_scalar(dolfinx.fem.form((uh - exact) ** 2 * ufl.dx)))))
assert err < 1e-3, err
print(json.dumps({"dolfinx": dolfinx.__version__, "smoke_l2_error": err}))
"""


class Dolfinx(PinnedVenvEnvironment):
    name = "dolfinx"
    description = "DOLFINx 0.11 (PETSc, MUMPS) from the dolfinx-solver-real wheel in its own venv"
    image = "casekit/dolfinx:0.11"
    pins = PINS
    smoke = _SMOKE
    imports = "dolfinx_solver, dolfinx, dolfinx.fem.petsc, scipy, gmsh, sympy"
    python_override = "CASEKIT_DOLFINX_PYTHON"


ENVIRONMENTS.register("dolfinx", Dolfinx())
