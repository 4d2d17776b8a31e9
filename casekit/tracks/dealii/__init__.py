"""The deal.II track: deal.II 9.4 from Debian; submissions are C++ programs.

A submission is one ``solver.cpp`` with a ``main``.  It is compiled inside the sandbox (the
evaluator's data hidden, no network) with casekit's CMake setup (``DEAL_II_SETUP_TARGET``,
Release); a compile error is the submission's failure, not the evaluator's.  Each run's working
directory holds ``case_spec.json`` and ``mesh.msh`` -- the case's domain meshed by casekit
(gmsh 2.2 ASCII, straight-sided cells about 1/16 of the domain's diameter; boundary id k is the
k-th tag of ``domain.boundary_tags``) which the program may refine -- and the program writes
``solution_grid.bin`` (or ``solution.npz``) and ``meta.json``.  The timed region is the whole
process (a compiled program has no import phase to exclude).

Calibration runs casekit's own program (``casekit/solvers/dealii``), compiled once per deal.II
version; only that exact binary is accepted as a prebuilt submission.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from casekit.domains.msh22 import mesh_text
from casekit.errors import CasekitError
from casekit.execution import PrepareError
from casekit.runner.base import RUNNERS, RunSpec
from casekit.runner.limits import Limits
from casekit.scoring.artifacts import max_solution_bytes
from casekit.tracks.base import THREAD_ENV, TRACKS, Track, image
from casekit.tracks.dealii import environment as _environment  # noqa: F401  (registers it)
from casekit.tracks.dealii import solvers as solver
from casekit.tracks.dealii.solvers.targets import ENTRIES

#: the mesh every run gets, as cells across the domain's diameter
AGENT_MESH_CELLS = 16
#: what compiling a submission may use
COMPILE_LIMITS = Limits(timeout_sec=900.0, memory_mb=8192, file_mb=1024, disk_mb=2048, nproc=512, nofile=1024)

#: the largest compiled program run (it is copied into every run's working directory); also the
#: compile sandbox's file-size limit, so a larger one is never written
MAX_BINARY_BYTES = 128 << 20
#: what a compiler, assembler or linker says when it hits the file-size limit (SIGXFSZ, EFBIG)
_FILE_SIZE_SIGNS = ("File size limit exceeded", "File too large", "signal 25")

CMAKE = """cmake_minimum_required(VERSION 3.13.4)
find_package(deal.II 9.4 REQUIRED)
deal_ii_initialize_cached_variables()
project(submission CXX)
add_executable(solver solver.cpp)
deal_ii_setup_target(solver RELEASE)
"""

_RUN = 'chmod u+x "./$0" && exec "./$0"'


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, kw_only=True)
class DealiiTrack(Track):
    language: str = "cpp"
    submission_files: tuple[str, ...] = ("solver.cpp",)
    prepare_memory_mb: int = COMPILE_LIMITS.memory_mb

    def status(self) -> tuple[bool, str]:
        from casekit.envs import ENVIRONMENTS

        env = ENVIRONMENTS.get("dealii").check()
        if not env.usable:
            return False, env.reason
        try:
            solver.program(self.versions()["deal.II"])
        except CasekitError as exc:
            return False, exc.message + (f" (log: {exc.file})" if exc.file else "")
        return True, "ok"

    @cached_property
    def _versions(self) -> dict[str, str]:
        from casekit.tracks.dealii.environment import version

        # the program's source hash: a changed solver invalidates cached calibrations
        out = {"deal.II": version() or "missing", "casekit_dealii": solver.source_hash()}
        try:
            cxx = subprocess.run(["c++", "--version"], capture_output=True, text=True, timeout=30)
            out["c++"] = (cxx.stdout.splitlines() or ["?"])[0]
        except (OSError, subprocess.TimeoutExpired):
            out["c++"] = "missing"
        return out

    def versions(self) -> dict[str, str]:
        return dict(self._versions)

    def _program(self) -> bytes:
        return solver.program(self.versions()["deal.II"]).read_bytes()

    def calibration_files(self, settings: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, bytes]:
        from casekit.solvers.settings import SolveSettings

        st = SolveSettings.from_dict(settings)
        try:
            text = solver.settings_json(case_spec, settings, mesh="calibration_mesh.msh")
        except KeyError as exc:
            raise CasekitError(f"the deal.II track has no solver for {case_spec['pde']['type']!r}: {exc}",
                               valid=", ".join(solver.families())) from None
        return {solver.PROGRAM: self._program(),
                "settings.json": json.dumps(text, sort_keys=True).encode(),
                "calibration_mesh.msh": mesh_text(case_spec, st.cells_across, st.cell,
                                                            st.corner_refinement).encode()}

    def calibration_submission(self, settings: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, bytes]:
        from casekit.solvers.settings import SolveSettings

        st = SolveSettings.from_dict(settings)
        text = solver.settings_json(case_spec, settings, mesh="embedded")
        mesh = mesh_text(case_spec, st.cells_across, st.cell, st.corner_refinement)
        return {"solver.cpp": solver.single_source(text, mesh).encode()}

    def prepare(self, files: dict[str, bytes], work: Path, *, runner: str = "local",
                hide: tuple[Path, ...] = ()) -> dict[str, bytes | Path]:
        """The compiled program, kept on disk as ``work/solver``.  The compile sandbox's file-size
        limit is :data:`MAX_BINARY_BYTES`: a larger program fails while the linker writes it and
        never reaches the host; the compile's directory is removed whatever the outcome."""
        if solver.PROGRAM in files:
            if _sha(files[solver.PROGRAM]) != _sha(self._program()):
                raise PrepareError("compile_error", f"{solver.PROGRAM} is not casekit's calibration program; "
                                   "submit solver.cpp")
            return dict(files)
        if "solver.cpp" not in files:
            raise PrepareError("missing_artifact", "a deal.II submission needs solver.cpp")
        cap_mb = max(1, MAX_BINARY_BYTES >> 20)
        allowed = f"at most {cap_mb} MiB are run (deal.II programs link deal.II dynamically and are a few MiB)"
        spec = RunSpec(["bash", "-c", "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > cmake.log 2>&1 "
                        "|| { cat cmake.log >&2; exit 1; }; cmake --build build -j 1 >&2 && cp build/solver ./solver"],
                       {"solver.cpp": files["solver.cpp"], "CMakeLists.txt": CMAKE.encode()},
                       {"PATH": "/usr/bin:/bin", **THREAD_ENV}, replace(COMPILE_LIMITS, file_mb=cap_mb), "none", hide,
                       (), image("dealii"), max_output_bytes=MAX_BINARY_BYTES)
        out = work / "compile"
        try:
            result = RUNNERS.get(runner).run(spec, out)
            binary = out / "solver"
            if result.timed_out:
                raise PrepareError("compile_error",
                                   f"compiling solver.cpp took more than {COMPILE_LIMITS.timeout_sec:g} s")
            if result.exit_code != 0 or not binary.is_file():
                if any(sign in result.stderr for sign in _FILE_SIZE_SIGNS):
                    raise PrepareError("compile_error", "the compiler stopped at the file-size limit: the compiled "
                                       f"solver (or a file on the way) would be larger than {cap_mb} MiB; {allowed}")
                errors = [ln for ln in result.stderr.splitlines() if "error" in ln.lower()]
                raise PrepareError("compile_error", "solver.cpp does not compile: "
                                   + ("\n".join(errors[:5]) or result.stderr[-1500:]))
            size = binary.lstat().st_size
            if binary.is_symlink() or size > MAX_BINARY_BYTES:
                raise PrepareError("compile_error", f"the compiled solver is {size >> 20} MiB; {allowed}")
            kept = work / "solver"
            binary.replace(kept)
        finally:  # the build's sources, logs and a rejected program go at once
            shutil.rmtree(out, ignore_errors=True)
        return {"solver": kept}

    def run_spec(self, files: dict[str, bytes | Path], case_spec: dict[str, Any], limits: Limits,
                 hide: tuple[Path, ...]) -> RunSpec:
        exe = solver.PROGRAM if solver.PROGRAM in files else "solver"
        inputs = {**files, "case_spec.json": json.dumps(case_spec).encode(),
                  solver.MESH: _agent_mesh(json.dumps(case_spec["domain"], sort_keys=True)).encode()}
        env = {"PATH": "/usr/bin:/bin", **THREAD_ENV}
        return RunSpec(["bash", "-c", _RUN, exe], inputs, env, limits, "wrapper", hide, (), image("dealii"),
                       max_output_bytes=max_solution_bytes(case_spec))

    def solver_families(self) -> list[str]:
        return list(solver.families())

    def solve_directly(self, case_spec: dict[str, Any], settings: dict[str, Any], work: Path) -> Path:
        """casekit's compiled program on the case in ``work`` (outside the sandbox)."""
        work.mkdir(parents=True, exist_ok=True)
        for stale in ("solution.npz", "solution_grid.bin"):  # a reused directory's earlier result
            (work / stale).unlink(missing_ok=True)
        for name, data in self.calibration_files(settings, case_spec).items():
            (work / name).write_bytes(data)
        (work / "case_spec.json").write_text(json.dumps(case_spec))
        exe = work / solver.PROGRAM
        exe.chmod(0o755)
        r = subprocess.run([str(exe)], cwd=work, capture_output=True, text=True, timeout=1800,
                           env={"PATH": "/usr/bin:/bin", **THREAD_ENV})
        if r.returncode != 0:
            raise CasekitError(f"the deal.II program failed: {r.stderr.strip()[-3000:]}")
        self.adapt_output(work, case_spec)
        return work / "solution.npz"

    def adapt_output(self, out_dir: Path, case_spec: dict[str, Any]) -> None:
        """Native outputs become the canonical ``solution.npz`` (:func:`casekit.tracks.compiled.adapt_grid_output`)."""
        from casekit.tracks.compiled import adapt_grid_output

        adapt_grid_output(out_dir, case_spec)


_MESH_CACHE: dict[str, str] = {}


def _agent_mesh(domain_json: str) -> str:
    """The mesh every run of a case gets (cached per domain: runs repeat)."""
    if domain_json not in _MESH_CACHE:
        domain = json.loads(domain_json)
        _MESH_CACHE[domain_json] = mesh_text({"domain": domain}, AGENT_MESH_CELLS)
    return _MESH_CACHE[domain_json]


TRACKS.register("dealii", DealiiTrack(
    name="dealii",
    description="deal.II 9.4 (Debian) with UMFPACK; C++ submissions compiled in the sandbox",
    title="deal.II 9.4",
    scaffold="scaffold.cpp.j2",
    families=solver.families(),
    # the kinds the program computes (targets.cc), as settings.json can describe them (targets.py)
    target_kinds=tuple(ENTRIES.names()),
    packages=(("UMFPACK", "deal.II 9.4 (Debian) with UMFPACK, LAPACK, muParser"), ("PETSC", "its PETSc wrappers"),
              ("TRILINOS", "its Trilinos wrappers"), ("GMSH", "gmsh mesh reading"), ("BOOST", "Boost (property trees "
              "for JSON)"), ("CXX17", "C++17")),
    unavailable=(("network", "anything that needs the network at build time (CMake's FetchContent)"),),
))
