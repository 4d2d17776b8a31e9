"""The track interface and registry.

A track is one FEM library, and one subpackage ``casekit/tracks/<name>/`` (or an installed
package registered through the ``casekit.tracks`` entry-point group) holding all it knows:

* ``__init__.py`` -- the :class:`Track` registered in :data:`TRACKS`: what it covers (families,
  domains), its language and submission files, the packages a submission can use, how a
  submission runs (a Python ``solve(case_spec)`` harness or a compiled program reading
  ``case_spec.json``), how native outputs become the canonical ``solution.npz``, and the
  calibration submission built from its solvers plus private settings;
* ``solvers/`` -- the calibration and reference solvers;
* ``environment.py`` -- the install recipe and usability check (registered in ENVIRONMENTS);
* ``container/Dockerfile`` -- the image for container runners;
* ``guide.md`` and ``scaffold.*.j2`` -- the prompt's API guide and the template-guided scaffold.

The core asks the track; it never names one.  ``docs/adding-a-track.md`` walks through it and
``casekit track new`` writes a working skeleton.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError
from casekit.registry import Registry
from casekit.runner.base import RunSpec
from casekit.runner.limits import Limits
from casekit.scoring.artifacts import max_solution_bytes
from casekit.solvers.bundle import solver_source

#: every PDE family of the design (tracks that cover all of them say so with this)
FAMILY_NAMES = ("poisson", "helmholtz", "biharmonic", "linear_elasticity", "heat", "convection_diffusion",
                "reaction_diffusion", "stokes", "navier_stokes", "burgers", "wave")

#: environment of every run: one thread per BLAS/OpenMP pool so timings are comparable
THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "PYTHONNOUSERSITE": "1"}


@cache
def trusted_cache_dir() -> Path:
    """Where casekit's own trusted runs (solvers run directly, environment checks) keep their JIT
    caches: a temporary directory of this process, removed when it exits.  Never inside a track's
    environment, which is bound into every sandboxed run: compiled kernels left there would let a
    submission skip the compilation that the calibration pays."""
    path, owner = Path(tempfile.mkdtemp(prefix="casekit-trusted-jit-")), os.getpid()

    def remove() -> None:  # by the process that made it (not by a forked child exiting)
        if os.getpid() == owner:
            shutil.rmtree(path, ignore_errors=True)

    atexit.register(remove)
    return path


#: what of a track's package decides its calibration and reference solves (the build's cache
#: keys, :meth:`Track.code_hash`): its solvers (every file, whatever the language: deal.II's are
#: ``.cc``) and its registration (how it runs them).  The guide, the scaffold, the container recipe and
#: the environment recipe only reach agents or installs -- their library versions are keyed on
#: their own -- so editing a prompt never rebuilds a dataset.
SOLVER_PARTS = ("solvers", "__init__.py")
#: files under those parts that are no code (caches)
_NOT_CODE = ("__pycache__", ".pyc")
#: parts of casekit's shared solver code that no calibration or reference solve runs: the inversion
#: battery (trusted in-process code scored at a build's trial, whose rules change by audits of the
#: committed records, not by rebuilding every calibration -- adding eigen_terms staled every track)
_NOT_SOLVES = ("baselines",)
#: casekit's shared solver code, hashed into every track's code (a module attribute: tests point it
#: at a copy)
SHARED_SOLVERS = Path(__file__).resolve().parent.parent / "solvers"


@dataclass(frozen=True, kw_only=True)
class Track(ABC):
    name: str
    language: str  # "python" or "cpp"
    description: str
    #: the library's name and version as prompts say it (e.g. "DOLFINx 0.11")
    title: str = ""
    #: the prompt's API guide and the scaffold template, files of the track's package
    guide: str = "guide.md"
    scaffold: str = ""
    #: families this track has calibration solvers for
    families: tuple[str, ...] = ()
    #: domain templates it can mesh (empty: all registered)
    domains: tuple[str, ...] = ()
    #: the files a submission consists of (read from a submission directory)
    submission_files: tuple[str, ...] = ()
    #: what a submission can use in the run environment, as (module or feature, description) --
    #: stated in prompts and checked against the environment by the tests -- and what it cannot
    packages: tuple[tuple[str, str], ...] = ()
    unavailable: tuple[tuple[str, str], ...] = ()
    #: the target kinds (casekit.targets) its calibration solvers compute; a case with targets lists
    #: only tracks that compute all of its kinds
    target_kinds: tuple[str, ...] = ()
    #: the memory preparing a submission may use (a compile's limit; 0: nothing is prepared), part
    #: of what one evaluation worker needs beside its runs' limit
    prepare_memory_mb: int = 0
    #: the rows of the shared convergence matrix (tests/tracks/matrix.py) its tests run, as
    #: "family-domain" (empty: every row it supports)
    convergence_rows: tuple[str, ...] = ()

    def packages_text(self) -> str:
        have = ", ".join(text for _, text in self.packages) or "the track's library"
        missing = ", ".join(text for _, text in self.unavailable)
        return f"{have}." + (f" Not available: {missing}." if missing else "")

    def supports(self, family: str, domain: str) -> bool:
        return family in self.families and (not self.domains or domain in self.domains)

    def code_hash(self) -> str:
        """A digest of the code behind this track's calibration and reference solves (the
        track's solvers and registration, :data:`SOLVER_PARTS`; casekit's shared solver code but
        the inversion battery, :data:`_NOT_SOLVES`; every
        runtime module a solve carries: expressions, domains, grids): part of the build's cache
        keys, so a fixed solver never hands back a result of the broken one, and a prompt edit
        (guide, scaffold) never invalidates a build."""
        import hashlib

        from casekit.solvers import bundle

        digest = hashlib.sha256()
        own = self.directory()
        shared = SHARED_SOLVERS
        parts = [(own, own / part) for part in SOLVER_PARTS] + [(shared, shared)]
        for root, part in parts:
            files = [part] if part.is_file() else sorted(part.rglob("*")) if part.is_dir() else []
            for f in files:
                if root == shared and f.relative_to(shared).parts[0] in _NOT_SOLVES:
                    continue
                if f.is_file() and not any(x in f.parts or f.suffix == x for x in _NOT_CODE):
                    digest.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
        for name, data in bundle.runtime_files():
            if any(name.startswith(f"casekit/solvers/{part}/") for part in _NOT_SOLVES):
                continue  # carried by every bundle (the baselines run as submissions), run by no solve
            digest.update(name.encode() + b"\0" + data + b"\0")
        return digest.hexdigest()[:16]

    def directory(self) -> Path:
        """The track's package directory (guide, scaffold, container recipe, solvers)."""
        return Path(sys.modules[type(self).__module__].__file__ or ".").resolve().parent

    def resource(self, name: str) -> Path:
        return self.directory() / name

    @abstractmethod
    def status(self) -> tuple[bool, str]:
        """Whether the track's environment is usable here, and why not."""

    @abstractmethod
    def versions(self) -> dict[str, str]:
        """Library versions (part of every cache key and recorded with results)."""

    @abstractmethod
    def calibration_files(self, settings: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, bytes]:
        """A submission (file name -> content) that runs casekit's solver with ``settings`` on
        ``case_spec`` (a compiled track pre-translates the case for its program)."""

    def calibration_submission(self, settings: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, bytes]:
        """The calibration as the files of an ordinary submission (what ``casekit baselines``
        writes; the evaluator runs it like an agent's).  Default: :meth:`calibration_files`."""
        return self.calibration_files(settings, case_spec)

    @abstractmethod
    def run_spec(self, files: dict[str, bytes | Path], case_spec: dict[str, Any], limits: Limits,
                 hide: tuple[Path, ...]) -> RunSpec:
        """How one run of a (prepared) submission executes (always from a fresh state)."""

    def prepare(self, files: dict[str, bytes], work: Path, *, runner: str = "local",
                hide: tuple[Path, ...] = ()) -> dict[str, bytes | Path]:
        """Turn submitted files into runnable ones (compile a C++ program, isolated by ``runner``
        with ``hide`` hidden); Python: as is.  A large prepared file (a compiled program) is a
        path under ``work``, never bytes: the evaluator holds every attempt of a case prepared
        until its rounds end.  Nothing rejected is left in ``work``.  Raises ``PrepareError``."""
        return dict(files)

    def adapt_output(self, out_dir: Path, case_spec: dict[str, Any]) -> None:
        """Convert native outputs in ``out_dir`` to the canonical artifacts (Python: nothing).
        Raises ``ArtifactError`` for native outputs that cannot be converted."""

    @abstractmethod
    def solver_families(self) -> list[str]:
        """The families the track's solvers register (declared ``families`` must be among them)."""

    @abstractmethod
    def solve_directly(self, case_spec: dict[str, Any], settings: dict[str, Any], work: Path) -> Path:
        """casekit's own solver on ``case_spec`` in ``work``, outside any sandbox (trusted code:
        convergence tests and benchmarks); returns the canonical ``solution.npz``."""


@dataclass(frozen=True, kw_only=True)
class PythonTrack(Track):
    """A track whose submissions are Python ``solve(case_spec)`` functions."""

    language: str = "python"
    submission_files: tuple[str, ...] = ("solver.py",)
    #: modules the harness imports before the timed region starts
    preload: tuple[str, ...] = ()
    #: module providing ``solve(case_spec, settings)`` for calibration
    solver_module: str = ""
    extra_env: dict[str, str] = field(default_factory=dict)
    #: environment variables naming the library's JIT cache directories; trusted runs point each
    #: to its own directory under :func:`trusted_cache_dir` (as they do XDG_CACHE_HOME)
    cache_env: tuple[str, ...] = ()

    def python(self) -> Path:
        """The interpreter of this track's environment."""
        return Path(sys.executable)

    @cached_property
    def _versions(self) -> dict[str, str]:
        code = ("import json, importlib.metadata as m\n"
                f"mods = {list(self.version_packages())!r}\n"
                "out = {}\n"
                "for name in mods:\n"
                "    try: out[name] = m.version(name)\n"
                "    except m.PackageNotFoundError: pass\n"
                "print(json.dumps(out))")
        try:
            r = subprocess.run([str(self.python()), "-c", code], capture_output=True, text=True, timeout=120)
            if r.returncode == 0:
                return dict(json.loads(r.stdout))
            why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
            why = str(exc)
        # versions are part of every cache key and record: never go on without them
        raise CasekitError(f"cannot read the {self.name} track's library versions with {self.python()}: {why}",
                           valid=f"a usable {self.name} environment (casekit env check {self.name})")

    def version_packages(self) -> tuple[str, ...]:
        return ()

    def versions(self) -> dict[str, str]:
        return dict(self._versions)

    def status(self) -> tuple[bool, str]:
        py = self.python()
        if not py.exists():
            return False, f"interpreter {py} is missing"
        code = ";".join(f"import {m}" for m in self.preload) or "pass"
        r = subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=300,
                           env={**os.environ, **self.trusted_cache_env()})
        if r.returncode != 0:
            return False, f"cannot import the track's libraries: {r.stderr.strip().splitlines()[-1:]}"
        return True, "ok"

    def calibration_files(self, settings: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, bytes]:
        """One self-contained ``solver.py``: casekit's runtime modules and this track's solvers
        travel inside it (the sandbox never sees the casekit package)."""
        body = (f"SETTINGS = {json.dumps(settings, sort_keys=True)!r}\n\n\n"
                "def solve(case_spec):\n"
                "    import json\n\n"
                "    _casekit_runtime()\n"
                f"    from {self.solver_module} import solve as _solve\n\n"
                "    _solve(case_spec, json.loads(SETTINGS))\n")
        source = solver_source(f"casekit calibration solver ({self.name}); the settings are private.", body,
                               self.solver_module)
        return {"solver.py": source.encode()}

    def trusted_cache_env(self) -> dict[str, str]:
        """The environment variables that keep a trusted run's JIT caches out of the track's
        environment (see :func:`trusted_cache_dir`)."""
        root = trusted_cache_dir() / self.name
        return {"XDG_CACHE_HOME": str(root / "xdg"), **{name: str(root / name) for name in self.cache_env}}

    def _run_python(self, code: str, work: Path, timeout: float = 1800, path: str = "") -> str:
        """``code`` in the track's interpreter in ``work`` (outside any sandbox: casekit's own
        trusted code), with a temporary directory of its own that is removed afterwards, however
        the process ended; its stdout, or a CasekitError with the end of its stderr."""
        with tempfile.TemporaryDirectory(prefix="casekit-trusted-") as tmp:
            env = {"PATH": f"{self.python().parent}:/usr/bin:/bin", "HOME": str(work), "TMPDIR": tmp, **THREAD_ENV,
                   **self.extra_env, **self.trusted_cache_env()}
            if path:
                env["PYTHONPATH"] = path
            r = subprocess.run([str(self.python()), "-c", code], cwd=work, capture_output=True, text=True,
                               timeout=timeout, env=env)
        if r.returncode != 0:
            raise CasekitError(f"the {self.name} solver failed: {r.stderr.strip()[-3000:]}")
        return r.stdout

    def solver_families(self) -> list[str]:
        from casekit.solvers.bundle import runtime_zip

        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "runtime.zip").write_bytes(runtime_zip(self.solver_module))
            preload = "".join(f"import {m}\n" for m in self.preload)
            out = self._run_python(f"{preload}import json\nfrom {self.solver_module} import FAMILY_SOLVERS\n"
                                   "print(json.dumps(FAMILY_SOLVERS.names()))", Path(tmp), 600,
                                   str(Path(tmp) / "runtime.zip"))
        return list(json.loads(out.strip().splitlines()[-1]))

    def solve_directly(self, case_spec: dict[str, Any], settings: dict[str, Any], work: Path) -> Path:
        work.mkdir(parents=True, exist_ok=True)
        for name, data in self.calibration_files(settings, case_spec).items():
            (work / name).write_bytes(data)
        (work / "case_spec.json").write_text(json.dumps(case_spec))
        self._run_python("import json, solver\nsolver.solve(json.load(open('case_spec.json')))", work)
        return work / "solution.npz"

    def needs(self) -> tuple[Path, ...]:
        """The track's environment and its base interpreter (read-only in the sandbox)."""
        py = self.python()
        venv = py.parent.parent
        base = Path(os.path.realpath(py)).parent.parent
        return (venv, base)

    def run_spec(self, files: dict[str, bytes | Path], case_spec: dict[str, Any], limits: Limits,
                 hide: tuple[Path, ...]) -> RunSpec:
        if "solver.py" not in files:
            raise CasekitError(f"a {self.name} submission needs solver.py", valid="solver.py with solve(case_spec)")
        harness = (Path(__file__).resolve().parent.parent / "runner" / "harness_python.py").read_bytes()
        inputs = {**files, "harness.py": harness, "case_spec.json": json.dumps(case_spec).encode()}
        env = {"PATH": f"{self.python().parent}:/usr/bin:/bin", **THREAD_ENV, **self.extra_env,
               "CASEKIT_PRELOAD": ",".join(self.preload)}
        return RunSpec([str(self.python()), "-s", "harness.py"], inputs, env, limits, "harness", hide, self.needs(),
                       image(self.name), max_output_bytes=max_solution_bytes(case_spec))


def image(track: str) -> str:
    """The container image of a track's environment ("" when it has none)."""
    from casekit.envs import ENVIRONMENTS

    return ENVIRONMENTS.get(track).image if track in ENVIRONMENTS else ""


#: every subpackage of casekit.tracks is a track; installed packages add theirs through the
#: ``casekit.tracks`` entry-point group (see docs/adding-a-track.md)
TRACKS: Registry[Track] = Registry("track", plugins="casekit.tracks", entry_points="casekit.tracks")
