"""Tracks whose submissions are C++ programs built with CMake (``casekit track new --language cpp``).

A submission is one ``solver.cpp`` with a ``main``.  It is compiled inside the sandbox (the
evaluator's data hidden, no network) with the track's ``CMakeLists.txt`` (:attr:`CompiledTrack.cmake`,
whose executable target is ``solver``); a compile error is the submission's failure, not the
evaluator's.  Each run's working directory holds ``case_spec.json`` (and what
:meth:`CompiledTrack.run_inputs` adds, e.g. a mesh), and the program writes
``solution_grid.bin`` -- row-major float64, the output arrays one after another -- or
``solution.npz``, and ``meta.json``.  The timed region is the whole process (a compiled program
has no import phase to exclude).

A track of a C++ library subclasses :class:`CompiledTrack` with its environment check, its
versions, its CMake setup and its calibration program (see the skeleton
``casekit/tracks/_skeleton/cpp`` and docs/adding-a-track.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from casekit.errors import CasekitError
from casekit.execution import PrepareError
from casekit.grid import Grid
from casekit.runner.base import RUNNERS, RunSpec
from casekit.runner.limits import Limits
from casekit.scoring.artifacts import ArtifactError, max_solution_bytes, output_names
from casekit.tracks.base import THREAD_ENV, Track, image

#: what compiling a submission may use
COMPILE_LIMITS = Limits(timeout_sec=900.0, memory_mb=8192, file_mb=1024, disk_mb=2048, nproc=512, nofile=1024)
#: the largest compiled program run (copied into every run's working directory); also the compile
#: sandbox's file-size limit, so a larger one is never written
MAX_BINARY_BYTES = 128 << 20
#: what a compiler, assembler or linker says when it hits the file-size limit (SIGXFSZ, EFBIG)
_FILE_SIZE_SIGNS = ("File size limit exceeded", "File too large", "signal 25")
#: a plain C++17 program of the standard library
PLAIN_CMAKE = """cmake_minimum_required(VERSION 3.13)
project(submission CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
add_executable(solver solver.cpp)
"""
_RUN = 'chmod u+x "./$0" && exec "./$0"'
_COMPILE = ("cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > cmake.log 2>&1 || { cat cmake.log >&2; exit 1; }; "
            "cmake --build build -j 1 >&2 && cp build/solver ./solver")


@dataclass(frozen=True, kw_only=True)
class CompiledTrack(Track):
    language: str = "cpp"
    submission_files: tuple[str, ...] = ("solver.cpp",)
    prepare_memory_mb: int = COMPILE_LIMITS.memory_mb
    #: the CMakeLists.txt every submission is built with (executable target: ``solver``)
    cmake: str = PLAIN_CMAKE

    def run_inputs(self, case_spec: dict[str, Any]) -> dict[str, bytes]:
        """Files every run gets beside ``case_spec.json`` (default: none)."""
        return {}

    def prepare(self, files: dict[str, bytes], work: Path, *, runner: str = "local",
                hide: tuple[Path, ...] = ()) -> dict[str, bytes | Path]:
        """The compiled program, kept on disk as ``work/solver``; the compile's directory is removed
        whatever the outcome, and a program above :data:`MAX_BINARY_BYTES` is never written."""
        if "solver.cpp" not in files:
            raise PrepareError("missing_artifact", f"a {self.name} submission needs solver.cpp")
        cap_mb = max(1, MAX_BINARY_BYTES >> 20)
        sources: dict[str, bytes | Path] = {"solver.cpp": files["solver.cpp"], "CMakeLists.txt": self.cmake.encode()}
        spec = RunSpec(["bash", "-c", _COMPILE], sources, {"PATH": "/usr/bin:/bin", **THREAD_ENV},
                       replace(COMPILE_LIMITS, file_mb=cap_mb), "none", hide, (), image(self.name),
                       max_output_bytes=MAX_BINARY_BYTES)
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
                                       f"solver would be larger than {cap_mb} MiB")
                errors = [ln for ln in result.stderr.splitlines() if "error" in ln.lower()]
                raise PrepareError("compile_error", "solver.cpp does not compile: "
                                   + ("\n".join(errors[:5]) or result.stderr[-1500:]))
            size = binary.lstat().st_size
            if binary.is_symlink() or size > MAX_BINARY_BYTES:
                raise PrepareError("compile_error", f"the compiled solver is {size >> 20} MiB; at most {cap_mb} MiB "
                                   "are run")
            kept = work / "solver"
            binary.replace(kept)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        return {"solver": kept}

    def run_spec(self, files: dict[str, bytes | Path], case_spec: dict[str, Any], limits: Limits,
                 hide: tuple[Path, ...]) -> RunSpec:
        if "solver" not in files:
            raise CasekitError(f"a {self.name} run needs the compiled solver (prepare() makes it)")
        inputs = {**files, "case_spec.json": json.dumps(case_spec).encode(), **self.run_inputs(case_spec)}
        return RunSpec(["bash", "-c", _RUN, "solver"], inputs, {"PATH": "/usr/bin:/bin", **THREAD_ENV}, limits,
                       "wrapper", hide, (), image(self.name), max_output_bytes=max_solution_bytes(case_spec))

    def solve_directly(self, case_spec: dict[str, Any], settings: dict[str, Any], work: Path) -> Path:
        """casekit's calibration program on the case in ``work``: compiled (in the sandbox) and run
        outside it (trusted code)."""
        work.mkdir(parents=True, exist_ok=True)
        for stale in ("solution.npz", "solution_grid.bin"):  # a reused directory's earlier result
            (work / stale).unlink(missing_ok=True)
        try:
            prepared = self.prepare(self.calibration_files(settings, case_spec), work)
        except PrepareError as exc:
            raise CasekitError(f"the {self.name} calibration program does not compile: {exc.message}") from None
        (work / "case_spec.json").write_text(json.dumps(case_spec))
        for name, data in self.run_inputs(case_spec).items():
            (work / name).write_bytes(data)
        exe = Path(prepared["solver"])  # type: ignore[arg-type]
        exe.chmod(0o755)
        r = subprocess.run([str(exe)], cwd=work, capture_output=True, text=True, timeout=1800,
                           env={"PATH": "/usr/bin:/bin", **THREAD_ENV})
        if r.returncode != 0:
            raise CasekitError(f"the {self.name} program failed: {r.stderr.strip()[-3000:]}")
        self.adapt_output(work, case_spec)
        return work / "solution.npz"

    def adapt_output(self, out_dir: Path, case_spec: dict[str, Any]) -> None:
        adapt_grid_output(out_dir, case_spec)


def adapt_grid_output(out_dir: Path, case_spec: dict[str, Any]) -> None:
    """A compiled program's native output becomes the canonical ``solution.npz``:
    ``solution_grid.bin`` (row-major float64, the output arrays one after another) or one
    ``solution_grid_<name>.bin`` per output array; a program that wrote ``solution.npz`` itself is
    left alone."""
    if (out_dir / "solution.npz").exists():
        return
    grid = Grid.from_spec(case_spec["eval_grid"])
    names = output_names(case_spec)
    size = int(np.prod(grid.shape))
    together = out_dir / "solution_grid.bin"
    apart = [out_dir / f"solution_grid_{n}.bin" for n in names]
    if together.is_file():
        arrays = dict(zip(names, read_grid(together, size * len(names), grid.shape, len(names)), strict=True))
    elif all(f.is_file() for f in apart):
        arrays = {n: read_grid(f, size, grid.shape, 1)[0] for n, f in zip(names, apart, strict=True)}
    else:
        return  # nothing native: the artifact check reports the missing solution.npz
    np.savez(out_dir / "solution.npz", **{**grid.axes(), **arrays})


def read_grid(path: Path, count: int, shape: tuple[int, ...], arrays: int) -> np.ndarray:
    """``arrays`` grid arrays of ``shape`` from a raw little-endian float64 file of ``count`` values."""
    if path.is_symlink() or path.stat().st_size != count * 8:
        raise ArtifactError("invalid_artifact", f"{path.name} has {path.stat().st_size} bytes; the grid {shape} "
                            f"with {arrays} array(s) needs {count * 8}")
    return np.fromfile(path, dtype="<f8").reshape(arrays, *shape)
