"""No JIT cache crosses into a run: the cache directories of a bound environment are masked, and
casekit's trusted runs (solvers run directly, environment checks and installs) keep their caches
in a temporary directory, never in the environment every run sees.  Otherwise a submission could
copy kernels compiled by a trusted run into its own cache and skip the compilation that the
calibration pays."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from casekit.runner.base import RunSpec
from casekit.runner.kinds import local
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS
from casekit.tracks.base import trusted_cache_dir


def _inside(path: str | Path, root: Path) -> bool:
    p = Path(path).resolve()
    return p == root.resolve() or root.resolve() in p.parents


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
def test_the_cache_directory_of_a_bound_environment_is_empty_in_a_run(tmp_path: Path) -> None:
    env = tmp_path / "env"
    (env / ".cache" / "pyop2").mkdir(parents=True)
    (env / ".cache" / "pyop2" / "kernel.so").write_text("COMPILED")
    (env / "bin").mkdir()
    (env / "bin" / "tool").write_text("TOOL")
    for d in (env, env / ".cache", env / ".cache" / "pyop2", env / "bin"):
        d.chmod(0o755)
    script = f"ls -A {env}/.cache; cat {env}/.cache/pyop2/kernel.so; cat {env}/bin/tool; echo end"
    spec = RunSpec(["/bin/sh", "-c", script], {}, {"PATH": "/usr/bin:/bin"}, Limits(timeout_sec=30, memory_mb=256),
                   timing="none", needs=(env,))
    r = local.LocalRunner().run(spec, tmp_path / "out")
    assert not r.setup_error and r.stdout.endswith("TOOLend\n"), (r.stdout, r.stderr, r.setup_error)
    assert "COMPILED" not in r.stdout and "pyop2" not in r.stdout, r.stdout


@pytest.mark.firedrake
def test_trusted_firedrake_runs_point_every_jit_cache_outside_the_environment(tmp_path: Path) -> None:
    track = TRACKS.get("firedrake")
    venv = track.python().parent.parent  # type: ignore[attr-defined]
    names = ["FIREDRAKE_CACHE_DIR", "PYOP2_CACHE_DIR", "FIREDRAKE_TSFC_KERNEL_CACHE_DIR", "XDG_CACHE_HOME"]
    out = track._run_python(f"import json, os; print(json.dumps({{k: os.environ.get(k) for k in {names!r}}}))",  # type: ignore[attr-defined]
                            tmp_path)
    got = json.loads(out.strip().splitlines()[-1])
    for name in names:
        assert got[name] and _inside(got[name], trusted_cache_dir()) and not _inside(got[name], venv), (name, got)


def test_the_firedrake_install_compiles_into_a_temporary_cache(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    """The smoke solve of ``casekit env install firedrake`` compiles kernels: not into the venv."""
    from casekit.tracks.firedrake import environment

    seen: dict[str, str] = {}

    def fake_run_steps(steps, stamps, log, *, env_vars=None, force=False, progress=None):  # type: ignore[no-untyped-def]
        seen.update(env_vars or {})
        for name in ("FIREDRAKE_CACHE_DIR", "PYOP2_CACHE_DIR", "FIREDRAKE_TSFC_KERNEL_CACHE_DIR", "XDG_CACHE_HOME"):
            assert Path(seen[name]).parent.is_dir(), name  # exists while the steps run

    monkeypatch.setenv("CASEKIT_ENV_DIR", str(tmp_path / "envs"))
    monkeypatch.setattr(environment, "run_steps", fake_run_steps)
    environment.Firedrake().install(log=tmp_path / "install.log")
    state = environment.Firedrake().state_dir()
    for name in ("FIREDRAKE_CACHE_DIR", "PYOP2_CACHE_DIR", "FIREDRAKE_TSFC_KERNEL_CACHE_DIR", "XDG_CACHE_HOME"):
        assert not _inside(seen[name], state), (name, seen[name])
        assert not Path(seen[name]).parent.exists()  # removed after the install


@pytest.mark.firedrake
def test_a_trusted_firedrake_solve_leaves_nothing_in_the_environment(tmp_path: Path) -> None:
    """casekit's own Firedrake code run directly (as root here, so the venv is writable and is
    Firedrake's default cache) compiles into the temporary cache only."""
    track = TRACKS.get("firedrake")
    venv = track.python().parent.parent  # type: ignore[attr-defined]

    def files() -> set[str]:
        return {str(p) for p in (venv / ".cache").rglob("*")} if (venv / ".cache").exists() else set()

    before = files()
    track._run_python("from firedrake import *\n"  # type: ignore[attr-defined]
                      "m = UnitSquareMesh(3, 3)\n"
                      "V = FunctionSpace(m, 'CG', 1)\n"
                      "print(assemble(TestFunction(V) * dx).dat.data.sum())\n", tmp_path)
    assert files() == before
    compiled = [p for p in (trusted_cache_dir() / "firedrake").rglob("*") if p.is_file()]
    assert compiled, "the solve compiled nothing into the trusted cache"
    assert not os.path.exists(tmp_path / ".cache")  # nor into the run's home
