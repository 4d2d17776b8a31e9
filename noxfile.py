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


#: the repaired PDEAgent-Bench release (issue 17): sources, build directory, dataset card's provenance
DATASET = {"name": "pdeagent-bench-repaired", "sources": "cases/pdeagent-bench", "build": "build/dataset",
           "about": "cases/pdeagent-bench/README.md"}


@nox.session(python=PYTHON)
def dataset(session: nox.Session) -> None:
    """The full build of the repaired PDEAgent-Bench and its release (a benchmark: hours).

    ``nox -s dataset -- [--tracks dolfinx,dealii,firedrake,ngsolve] [--jobs 2] [--version 1.0.0]``
    builds cases/pdeagent-bench on every track named that is usable here (the stage cache in
    build/dataset makes any interrupted run resume where it stopped), packages the built cases
    (DOLFINx primary; refused if it would leave out a case of the latest release) and cuts the
    release releases/<name>/<version>/ after the latest one (``--version`` is the first release's
    version).
    """
    import argparse
    import json
    import subprocess
    from pathlib import Path

    ap = argparse.ArgumentParser(prog="nox -s dataset --")
    ap.add_argument("--tracks", default="dolfinx,dealii,firedrake,ngsolve")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--version", default="1.0.0", help="the first release's version (later ones: the bump)")
    args = ap.parse_args(session.posargs)
    session.install("-e", ".[dolfinx,dev]")
    build, dist = DATASET["build"], f"{DATASET['build']}/release"
    tracks = []
    for track in args.tracks.split(","):
        check = subprocess.run([session.bin + "/casekit", "env", "check", track, "--json"], capture_output=True,
                               text=True, check=True)
        status = json.loads(check.stdout)[0]
        if not status["usable"]:
            session.warn(f"track {track} is not usable here, so it is left out: {status['reason']} "
                         f"(casekit env install {track})")
            continue
        tracks.append(track)
        # exit 1 when a case is rejected: the reasons are in build/dataset/<track>/build-report.json
        session.run("casekit", "build", DATASET["sources"], "--track", track, "--build-dir", build,
                    "--jobs", args.jobs, success_codes=[0, 1])
    if "dolfinx" not in tracks:
        session.error("the release needs the dolfinx track (every case is built on it)")
    tracks.remove("dolfinx")
    session.run("casekit", "package", build, "--out", dist, "--name", DATASET["name"], "--version", args.version,
                "--about", DATASET["about"], *(f"--track={t}" for t in ["dolfinx", *tracks]))
    released = Path("releases") / DATASET["name"]

    def latest() -> Path | None:
        return max((p for p in released.glob("*.*.*") if p.is_dir()),
                   key=lambda p: tuple(int(x) for x in p.name.split(".")), default=None)

    previous = latest()
    after = ["--previous", str(previous)] if previous else ["--version", args.version]
    session.run("casekit", "release", dist, *after)
    keep = latest()
    session.run("casekit", "verify", str(keep))
    session.log(f"released {keep} (commit it) "
                f"(check: casekit reproduce {keep} --sources {DATASET['sources']})")
