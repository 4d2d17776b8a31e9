"""Firedrake built from PyPI sources on a PETSc configured against Debian's libraries.

The recipe (no downloads outside the package registries): Debian build dependencies; a Python
3.12 venv of its own; PETSc 3.26.1 from its sdist with ``PETSC_CONFIGURE_OPTIONS`` pointing at
Debian's HDF5, MUMPS, ScaLAPACK, PT-Scotch, METIS, SuiteSparse, SuperLU_dist, hwloc and FFTW (no
hypre: Debian's is too old for PETSc 3.26); mpi4py built from source; petsc4py, libsupermesh and
h5py (parallel HDF5) built against them; Firedrake's runtime dependencies; Firedrake itself; a
smoke solve (P2 Poisson, L2 error checked).  Every version is pinned, so the recipe hash names
the environment.  Measured on this project's 2-core Debian 12 machine: about 24 minutes (PETSc
6.5, h5py 5, petsc4py 5, mpi4py 3, Firedrake 3.5), with other builds running at the same time.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from casekit.envs.base import ENVIRONMENTS, Environment, EnvStatus, Step, find_python, run_steps, state_root

LIB = "/usr/lib/x86_64-linux-gnu"
APT = ("bison", "flex", "libhdf5-mpi-dev", "libmumps-dev", "libscalapack-openmpi-dev", "libptscotch-dev",
       "libmetis-dev", "libsuitesparse-dev", "libsuperlu-dist-dev", "libfftw3-mpi-dev", "libhwloc-dev",
       "libopenmpi-dev", "gfortran", "pkg-config", "g++", "make", "patchelf")


def _libs(*names: str) -> str:
    return "[" + ",".join(f"{LIB}/{n}" for n in names) + "]"


PETSC_CONFIGURE = " ".join([
    "--with-debugging=0", "--with-shared-libraries=1", "--with-fortran-bindings=0", "--with-strict-petscerrorcode",
    "COPTFLAGS=-O2", "CXXOPTFLAGS=-O2", "FOPTFLAGS=-O2",
    "--with-hdf5-include=/usr/include/hdf5/openmpi",
    "--with-hdf5-lib=" + _libs("hdf5/openmpi/libhdf5_hl.so", "hdf5/openmpi/libhdf5.so"),
    "--with-scalapack-lib=-lscalapack-openmpi",
    "--with-metis-include=/usr/include", "--with-metis-lib=" + _libs("libmetis.so"),
    "--with-mumps-include=/usr/include",
    "--with-mumps-lib=" + _libs("libdmumps.so", "libzmumps.so", "libsmumps.so", "libcmumps.so",
                                "libmumps_common.so", "libpord.so"),
    "--with-ptscotch-include=/usr/include/scotch",
    "--with-ptscotch-lib=" + _libs("libptesmumps.so", "libptscotch.so", "libptscotcherr.so", "libscotch.so",
                                   "libscotcherr.so"),
    "--with-suitesparse-include=/usr/include/suitesparse",
    "--with-suitesparse-lib=" + _libs("libspqr.so", "libumfpack.so", "libklu.so", "libcholmod.so", "libbtf.so",
                                      "libccolamd.so", "libcolamd.so", "libcamd.so", "libamd.so",
                                      "libsuitesparseconfig.so"),
    "--with-superlu_dist-include=/usr/include/superlu-dist", "--with-superlu_dist-lib=" + _libs("libsuperlu_dist.so"),
    "--with-hwloc", "--with-fftw-include=/usr/include",
    "--with-fftw-lib=" + _libs("libfftw3_mpi.so", "libfftw3.so"),
    "--with-zlib", "--with-bison",
])

#: build tools and bindings (built from source where they link against MPI/PETSc)
TOOLS = ("Cython==3.3.1", "numpy==2.5.5", "pkgconfig==1.6.0", "pybind11==3.1.0", "petsctools==2026.1",
         "rtree==1.4.1", "firedrake-rtree==2026.3.0", "scikit-build-core==1.1.2", "cmake==4.4.4", "ninja==1.13.2",
         "setuptools==84.2.1", "wheel==0.47.0", "meson-python==0.19.0", "meson==1.10.0")
RUNTIME = ("cachetools==8.0.1", "decorator==4.4.2", "fenics-ufl==2026.2.0", "firedrake-fiat==2026.10.0",
           "immutabledict==4.3.1", "loopy==2025.2", "packaging==26.3", "progress==1.6.1",
           "pyadjoint-ad==2026.10.0", "pycparser==3.12", "pytools[siphash]==2026.1.1", "requests==2.34.2",
           "scipy==1.18.1", "sympy==1.14.0", "islpy==2026.1", "gmsh==4.15.2", "meshio==5.3.5", "pyyaml==6.0.3",
           "jsonschema==4.26.0")
PETSC, PETSC4PY, MPI4PY, LIBSUPERMESH, H5PY, FIREDRAKE = ("petsc==3.26.1", "petsc4py==3.26.0", "mpi4py==4.1.2",
                                                          "libsupermesh==2026.3", "h5py==3.16.0",
                                                          "firedrake==2026.10.0")


#: where Firedrake 2026.10 keeps its JIT caches (firedrake/configuration.py: FIREDRAKE_CACHE_DIR,
#: else ``sys.prefix/.cache`` when the interpreter's prefix is writable -- the venv, as root -- else
#: ``~/.cache``; PyOP2's and TSFC's from it unless set; loopy's through pytools, which follows
#: XDG_CACHE_HOME).  Trusted runs set all of them to a temporary directory.
JIT_CACHE_ENV = ("FIREDRAKE_CACHE_DIR", "PYOP2_CACHE_DIR", "FIREDRAKE_TSFC_KERNEL_CACHE_DIR")


def jit_cache_env(root: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(root / "xdg"), **{name: str(root / name) for name in JIT_CACHE_ENV}}


class Firedrake(Environment):
    name = "firedrake"
    description = "Firedrake 2026.10 built from PyPI sources on PETSc 3.26.1 against Debian's libraries"
    image = "casekit/firedrake:2026.10"

    def recipe(self) -> object:
        return {"apt": APT, "petsc_configure": PETSC_CONFIGURE, "tools": TOOLS, "runtime": RUNTIME,
                "pins": [PETSC, PETSC4PY, MPI4PY, LIBSUPERMESH, H5PY, FIREDRAKE], "python": "3.12",
                "smoke": _SMOKE}

    def venv(self) -> Path:
        return self.state_dir() / "venv"

    def python(self) -> Path:
        return self.venv() / "bin" / "python"

    def step_env(self) -> dict[str, str]:
        return {"MPICC": "/usr/bin/mpicc", "MPICXX": "/usr/bin/mpicxx", "MPIFORT": "/usr/bin/mpifort",
                "CC": "/usr/bin/mpicc", "CXX": "/usr/bin/mpicxx", "HDF5_MPI": "ON",
                # h5py takes either include/lib dirs or a prefix, not both
                "HDF5_INCLUDEDIR": "/usr/include/hdf5/openmpi",
                "HDF5_LIBDIR": f"{LIB}/hdf5/openmpi", "PETSC_CONFIGURE_OPTIONS": PETSC_CONFIGURE,
                "PIP_DISABLE_PIP_VERSION_CHECK": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

    def steps(self) -> list[Step]:
        pip = f"{self.python()} -m pip install --no-input"
        petsc_dir = f"$({self.python()} -c 'import petsc; print(petsc.get_petsc_dir())')"
        apt = "apt-get" if os.geteuid() == 0 else "sudo apt-get"
        return [
            Step("apt", (f"{apt} update -qq", f"{apt} install -y -qq --no-install-recommends " + " ".join(APT))),
            Step("venv", (f"{find_python('3.12', 'CASEKIT_FIREDRAKE_PYTHON')} -m venv --clear {self.venv()}",
                          f"{pip} --upgrade pip==25.3")),
            Step("tools", (f"{pip} " + " ".join(f"'{t}'" for t in TOOLS),)),
            Step("petsc", (f"{pip} --no-deps --no-build-isolation '{PETSC}'",)),
            Step("mpi4py", (f"{pip} --no-binary mpi4py --no-build-isolation '{MPI4PY}'",)),
            Step("petsc4py", (f"PETSC_DIR={petsc_dir} {pip} --no-build-isolation --no-deps '{PETSC4PY}'",)),
            Step("libsupermesh", (f"{pip} --no-build-isolation '{LIBSUPERMESH}'",)),
            Step("h5py", (f"{pip} --no-binary h5py --no-build-isolation --no-deps '{H5PY}'",)),
            Step("runtime", (f"{pip} " + " ".join(f"'{r}'" for r in RUNTIME),)),
            Step("firedrake", (f"PETSC_DIR={petsc_dir} {pip} --no-build-isolation --no-deps '{FIREDRAKE}'",
                               f"{self.python()} -m pip freeze > {self.state_dir() / 'freeze.txt'}")),
            Step("smoke", (f"{self.python()} -c {shlex.quote(_SMOKE)} > {self.state_dir() / 'smoke.json'}",)),
        ]

    def install(self, log: Path | None = None, force: bool = False,
                progress: Callable[[str, str, float], None] = lambda step, state, seconds: None) -> Path:
        """As every environment's, but the smoke solve's JIT caches go to a temporary directory:
        by default they would land in the venv (``sys.prefix/.cache``), which every run sees."""
        state = self.state_dir()
        log = log or state / "install.log"
        with tempfile.TemporaryDirectory(prefix="casekit-firedrake-jit-") as cache:
            run_steps(self.steps(), state / "stamps", log, env_vars={**self.step_env(), **jit_cache_env(Path(cache))},
                      force=force, progress=progress)
        return log

    def check(self) -> EnvStatus:
        smoke = self.state_dir() / "smoke.json"
        if not self.python().exists():
            others = sorted(p.name for p in state_root().glob("firedrake-*")) if state_root().exists() else []
            return EnvStatus(self.name, False, "not installed" + (f" (other recipes: {', '.join(others)})"
                                                                   if others else ""),
                             {"install": "casekit env install firedrake", "location": str(self.state_dir())})
        if not smoke.exists():
            return EnvStatus(self.name, False, "installed but the smoke solve has not passed",
                             {"location": str(self.state_dir())})
        with tempfile.TemporaryDirectory(prefix="casekit-firedrake-jit-") as cache:
            r = subprocess.run([str(self.python()), "-c", "import firedrake"], capture_output=True, text=True,
                               timeout=600, env={**os.environ, **_runtime_env(), **jit_cache_env(Path(cache))})
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or [""])[-1]
            return EnvStatus(self.name, False, "cannot import firedrake: " + last)
        return EnvStatus(self.name, True, details={**json.loads(smoke.read_text()), "python": str(self.python())})


def _runtime_env() -> dict[str, str]:
    return {"OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


_SMOKE = """
import json
from firedrake import *
import firedrake, petsc4py
m = UnitSquareMesh(16, 16)
V = FunctionSpace(m, "CG", 2)
u, v = TrialFunction(V), TestFunction(V)
x, y = SpatialCoordinate(m)
exact = sin(pi * x) * sin(pi * y)
uh = Function(V)
solve(inner(grad(u), grad(v)) * dx == 2 * pi**2 * exact * v * dx, uh, bcs=[DirichletBC(V, 0, "on_boundary")])
err = sqrt(assemble((uh - exact) ** 2 * dx))
assert err < 1e-3, err
print(json.dumps({"firedrake": firedrake.__version__ if hasattr(firedrake, "__version__") else "2026.10.0",
                  "petsc4py": petsc4py.__version__, "smoke_l2_error": err}))
"""

ENVIRONMENTS.register("firedrake", Firedrake())
