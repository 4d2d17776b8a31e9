"""nox sessions: tests, lint, bench (full builds are benchmarks, not tests)."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.12"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The test suite (what .ci/run runs): coarse cases, a few minutes on 2 cores."""
    session.install("-e", ".[dolfinx,dev]")
    session.run("pytest", "-n", "2", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (style, imports, bugbear) and mypy on the package."""
    session.install("-e", ".[dev]")
    session.run("ruff", "check", "casekit", "tests", "benchmarks", "noxfile.py")
    session.run("mypy", "casekit")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks: printed tables, never asserted (meshing, builds, evaluator overhead)."""
    session.install("-e", ".[dolfinx,dev]")
    import pathlib

    for script in sorted(pathlib.Path("benchmarks").glob("bench_*.py")):
        session.run("python", str(script), *session.posargs)
