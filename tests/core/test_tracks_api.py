"""The track extension point: registries load plugins from entry points, and the skeleton that
``casekit track new`` writes is a working track whose own tests pass in a fresh checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from casekit.errors import CasekitError, UsageError
from casekit.registry import Registry
from tests.conftest import REPO


def test_an_installed_package_registers_through_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    things: Registry[str] = Registry("thing", entry_points="casekit.test_things")
    plugin = types.ModuleType("casekit_plugin_for_test")
    exec("THINGS.register('external', 'from a plugin')", {"THINGS": things}, plugin.__dict__)
    monkeypatch.setitem(sys.modules, "casekit_plugin_for_test", plugin)
    ep = importlib.metadata.EntryPoint("external", "casekit_plugin_for_test", "casekit.test_things")
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None: [ep] if group == "casekit.test_things" else [])
    assert things.names() == ["external"]
    broken: Registry[str] = Registry("thing", entry_points="casekit.test_broken")
    bad = importlib.metadata.EntryPoint("broken", "no_such_module_anywhere", "casekit.test_broken")
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group=None: [bad])
    with pytest.raises(CasekitError, match="plugin 'broken'"):
        broken.names()


def test_track_names_are_checked(tmp_path: Path) -> None:
    from casekit.tracks.new import new_track

    with pytest.raises(UsageError, match="registered already"):
        new_track("dolfinx", root=tmp_path)
    with pytest.raises(UsageError, match="not a usable track name"):
        new_track("Bad-Name", root=tmp_path)
    with pytest.raises(UsageError, match="not a casekit checkout"):
        new_track("newlib", root=tmp_path)


def _fake_checkout(root: Path) -> Path:
    """The two things that make a directory a casekit checkout for ``casekit track new``."""
    (root / "casekit" / "tracks").mkdir(parents=True)
    (root / "casekit" / "tracks" / "base.py").write_text("")
    (root / "tests" / "tracks").mkdir(parents=True)
    (root / ".git").mkdir()
    return root


def test_track_new_writes_into_the_checkout_that_holds_the_current_directory(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30: ``casekit track new`` wrote into the checkout casekit was installed from, whatever
    directory the contributor stood in.  It now writes into the checkout holding the current
    directory (from any subdirectory of it), or the one --root names, and refuses a directory in
    no checkout with one line naming the project it is in."""
    from typer.testing import CliRunner

    from casekit.cli import app

    mine = _fake_checkout(tmp_path / "my-clone")
    monkeypatch.chdir(mine / "tests" / "tracks")
    r = CliRunner().invoke(app, ["track", "new", "here_lib", "--title", "Here 1.0"])
    assert r.exit_code == 0, r.output
    assert (mine / "casekit" / "tracks" / "here_lib" / "__init__.py").is_file()
    assert (mine / "tests" / "tracks" / "here_lib" / "test_here_lib.py").is_file()
    assert not any((REPO / part / "tracks" / "here_lib").exists() for part in ("casekit", "tests"))

    other = _fake_checkout(tmp_path / "other-clone")
    r = CliRunner().invoke(app, ["track", "new", "there_lib", "--language", "cpp", "--root", str(other)])
    assert r.exit_code == 0, r.output
    assert (other / "casekit" / "tracks" / "there_lib" / "solvers" / "poisson.cpp").is_file()
    assert not (mine / "casekit" / "tracks" / "there_lib").exists()

    project = tmp_path / "some-project"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    r = CliRunner().invoke(app, ["track", "new", "nowhere_lib"])
    assert r.exit_code == 2 and "not in a casekit checkout" in r.output and "some-project" in r.output
    assert "--root" in r.output and not (project / "casekit").exists()
    r = CliRunner().invoke(app, ["track", "new", "bad_lang", "--language", "fortran", "--root", str(mine)])
    assert r.exit_code == 2 and "python, cpp" in r.output


@pytest.mark.slow
@pytest.mark.parametrize(("language", "name"), [("python", "skel_fd"), ("cpp", "skel_cc")])
def test_the_skeleton_of_a_new_track_passes_its_own_tests(language: str, name: str, tmp_path: Path) -> None:
    """What docs/adding-a-track.md walks through, in a fresh copy of the checkout (run from a
    subdirectory of it): the skeleton's own end-to-end test, the coverage and the convergence test
    pass -- for a C++ track too (a CMake-built program, compiled in the sandbox)."""
    if language == "cpp" and not all(shutil.which(tool) for tool in ("c++", "cmake", "make")):
        pytest.skip("no C++ compiler and CMake here")
    root = tmp_path / "checkout"
    for part in ("casekit", "tests", "schemas", "templates", "pyproject.toml"):
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, root / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, root / part)
    env = {**os.environ, "PYTHONPATH": str(root)}
    r = subprocess.run([sys.executable, "-m", "casekit.cli", "track", "new", name, "--language", language, "--title",
                        "finite differences"], cwd=root / "tests", env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (root / "casekit" / "tracks" / name / "solvers" / "__init__.py").is_file()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "tests/tracks", "-k", name], cwd=root, env=env, capture_output=True, text=True,
                       timeout=1500)
    assert r.returncode == 0 and "3 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]


@pytest.mark.parametrize("track", ["dolfinx", "firedrake", None])
def test_the_runtime_bundle_carries_no_authoring_derivation_or_build_code(track: str | None) -> None:
    from casekit.solvers.bundle import NEVER, _files
    from casekit.tracks import TRACKS

    module = TRACKS.get(track).solver_module if track else None  # type: ignore[attr-defined]
    names = [n for n, _ in _files(module)]
    assert "casekit/expr/parser.py" in names and "casekit/domains/geometry/region.py" in names
    for n in names:
        parts = n.removeprefix("casekit/").split("/")
        assert parts[0].removesuffix(".py") not in NEVER, n
    stubs = dict(_files(module))
    assert stubs.get("casekit/tracks/__init__.py", b"") == b""  # registration stays out of the sandbox


def test_a_change_of_a_track_s_solver_code_changes_its_cache_key(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The build's reference, calibration and trial stages are keyed by the solver code: a fixed
    solver never gets the broken one's cached result back (an NGSolve periodic fix once did)."""
    import shutil

    from casekit.tracks import TRACKS

    track = TRACKS.get("ngsolve")
    copy = tmp_path / "ngsolve"
    shutil.copytree(track.directory(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(type(track), "directory", lambda self: copy)
    before = track.code_hash()
    assert track.code_hash() == before  # deterministic
    (copy / "solvers" / "__init__.py").write_text((copy / "solvers" / "__init__.py").read_text() + "\n# fixed\n")
    assert track.code_hash() != before


@pytest.mark.parametrize("name", ["dolfinx", "dealii"])
def test_only_what_decides_a_solve_is_in_the_code_hash(name: str, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every file of a track's solvers counts, whatever its language (deal.II's ``.cc`` once did
    not: a fixed C++ solver would have handed back the broken one's records), and so does its
    registration; its guide, scaffold and container recipe reach agents only, and editing them
    never invalidates a dataset build."""
    import shutil

    from casekit.tracks import TRACKS

    track = TRACKS.get(name)
    copy = tmp_path / name
    shutil.copytree(track.directory(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(type(track), "directory", lambda self: copy)
    before = track.code_hash()
    for prompt_side in ("guide.md", *(p.name for p in copy.glob("scaffold.*.j2")), "container/Dockerfile"):
        (copy / prompt_side).write_text((copy / prompt_side).read_text() + "\n# reworded\n")
    (copy / "solvers" / "__pycache__").mkdir(exist_ok=True)
    (copy / "solvers" / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"cache")
    assert track.code_hash() == before
    solver = next(p for p in sorted((copy / "solvers").rglob("*")) if p.is_file() and p.suffix in (".py", ".cc")
                  and p.name != "__init__.py" and "__pycache__" not in p.parts)
    solver.write_text(solver.read_text() + "\n")
    after_solver = track.code_hash()
    assert after_solver != before
    (copy / "__init__.py").write_text((copy / "__init__.py").read_text() + "\n# registration\n")
    assert track.code_hash() != after_solver
    if name == "dealii":
        cc = sorted((copy / "solvers").glob("*.cc"))
        assert cc, "deal.II's solvers are C++"
        cc[0].write_text(cc[0].read_text() + "\n// fixed\n")
        assert track.code_hash() not in (before, after_solver)


def test_the_runtime_loader_removes_its_directory_when_the_process_ends(tmp_path: Path) -> None:
    """casekit's own solver.py unpacks its runtime into a temporary directory, gone at exit."""
    import subprocess
    import sys

    from casekit.solvers.bundle import solver_source

    body = "def solve(case_spec):\n    _casekit_runtime()\n    import casekit.grid\n    print(casekit.grid.__file__)\n"
    (tmp_path / "solver.py").write_text(solver_source("a test solver", body))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    r = subprocess.run([sys.executable, "-c", "import solver; solver.solve({})"], cwd=tmp_path, capture_output=True,
                       text=True, env={"TMPDIR": str(scratch), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert r.returncode == 0 and "casekit_runtime.zip" in r.stdout, r.stderr
    assert list(scratch.iterdir()) == []


@pytest.mark.numpy
def test_a_trusted_solve_leaves_nothing_in_the_temp_dir(tmp_path: Path) -> None:
    """casekit's trusted runs (a direct solve, a track's solver list) get a temporary directory
    of their own, removed however the process ended (here: without running its exit handlers)."""
    from casekit.tracks import TRACKS

    code = "import os, tempfile\nprint(tempfile.mkdtemp(prefix='casekit-runtime-'), flush=True)\nos._exit(0)\n"
    made = Path(TRACKS.get("numpy")._run_python(code, tmp_path, 120).strip())  # type: ignore[attr-defined]
    try:
        assert made.name.startswith("casekit-runtime-") and not made.exists()
    finally:
        shutil.rmtree(made, ignore_errors=True)
