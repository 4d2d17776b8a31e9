"""nox sessions: tests, lint, bench (full builds are benchmarks, not tests)."""

from __future__ import annotations

from pathlib import Path

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


#: the repaired PDEAgent-Bench release (issue 17): sources, the committed build area (its progress, in the
#: repository), the machine's build directory (stage cache, not committed), dataset card's provenance
DATASET = {"name": "pdeagent-bench-repaired", "sources": "cases/pdeagent-bench",
           "area": "datasets/pdeagent-bench-repaired/build", "build": "build/dataset",
           "about": "cases/pdeagent-bench/README.md"}
#: every track the dataset is built on; dolfinx is primary (every case is built on it); the sample tracks
#: (casekit.build.sample.SAMPLE_TRACKS: deal.II, Firedrake) are built and released on their stratified sample
DATASET_TRACKS = "dolfinx,dealii,firedrake,ngsolve,numpy"
#: further sets of cases released beside the imported one, each as its own configurations (casekit package
#: --subset NAME=DIR): the authored sample -- cases/<family>/*.yaml outside cases/pdeagent-bench -- with its own
#: committed build area; its shards are named NAME.SHARD (authored.heat, authored.all.1of3)
DATASET_SUBSETS = {"authored": {"sources": "cases", "exclude": "cases/pdeagent-bench",
                                "area": "datasets/pdeagent-bench-repaired/build-authored"}}


def _dataset_where(subset: str) -> list[str]:
    """The sources and area arguments of ``casekit dataset`` for the imported set ("") or a further set."""
    if not subset:
        return [DATASET["sources"], "--area", DATASET["area"]]
    s = DATASET_SUBSETS[subset]
    return [s["sources"], "--exclude", s["exclude"], "--area", s["area"]]


@nox.session(python=PYTHON)
def dataset(session: nox.Session) -> None:
    """The repaired PDEAgent-Bench, built shard by shard with its progress in the repository.

    ``nox -s dataset -- --shard heat [--tracks dolfinx] [--jobs 2]`` builds one shard -- a family
    (``heat``) or a slice (``poisson.2of3``: every third sorted id from the second; ``all.3of10``), or
    a track's stratified sample (``--shard sample --tracks dealii,firedrake``, sliced as ``sample.1of2``) --
    on each track named (default dolfinx) that is usable here, at most 60 minutes on 2 cores per track
    (``nox -s dataset`` lists a family projected past that as slices).  Cases whose committed record key
    (case source and derivation, the track's solver code, its library versions) matches are done; the
    others are built in build/dataset (this machine's stage cache) and each one's record -- or rejection,
    with its reason -- is written into datasets/<name>/build/<track>/<family>/ as it finishes, so an
    interrupted shard keeps what finished.  It prints what to commit and the machine time (seconds per
    case and the projection for the whole set).  ``--shard authored.heat`` is a shard of the authored sample
    (cases/<family>/*.yaml outside cases/pdeagent-bench), committed into its own area,
    datasets/<name>/build-authored/.

    ``nox -s dataset`` (no ``--shard``) prints every shard with its done / to-build counts per track
    (default: every track) and the machine time; deal.II and Firedrake are sample tracks
    (casekit.build.sample.SAMPLE_TRACKS): they are counted, listed with their sample shards to run and
    released on their stratified sample -- every family, math type and domain template they support, at
    least 50 cases -- while dolfinx and NGSolve build every case.  When every case of dolfinx is done it
    packages the committed records (``casekit dataset materialise``, then ``casekit package``; another track
    only when it is complete too -- a sample track when its sample is; refused if it would leave out a case
    of the latest release) and cuts the release releases/<name>/<version>/ after the latest one
    (``--version`` is the first release's version).  A release is immutable, so it waits for every track
    named (``--tracks``, default all) to be usable here and complete, on both sets: ``--partial`` releases
    what is complete and names what it leaves out.  The authored sample goes in as the configurations
    ``authored_agent``, ``authored`` and ``authored_<track>`` when its dolfinx is complete too (its other
    tracks when each is); the card states the numbers beside the paper's and the machine time (``casekit
    dataset numbers --area AREA`` prints them from the repository).

    Calibration repeats: 1 (``--repeats``).  Under the paired gate (README: Runtime gate) t_base is
    metadata -- the evaluator re-times the calibration beside every submission -- so one timed run is
    enough, and the committed key does not hold the repeats or the machine.
    """
    import argparse
    import json
    import subprocess

    ap = argparse.ArgumentParser(prog="nox -s dataset --")
    ap.add_argument("--shard", help="a family, FAMILY.KofN, all, all.KofN, sample or sample.KofN (a sample track's "
                                    "stratified sample; none: list the shards, release when the primary track is "
                                    "complete)")
    ap.add_argument("--tracks", default=None, help=f"comma-separated (default: dolfinx with --shard, else "
                                                   f"{DATASET_TRACKS})")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--repeats", default="1", help="timed calibration runs (t_base is metadata under the paired gate)")
    ap.add_argument("--version", default="1.0.0", help="the first release's version (later ones: the bump)")
    ap.add_argument("--partial", action="store_true",
                    help="release the tracks and sets that are complete even if a track named (by default every "
                         "track) is not usable here or not complete (a release is immutable: without this flag a "
                         "release waits for every track)")
    args = ap.parse_args(session.posargs)
    session.install("-e", ".[dolfinx,dev]")
    casekit = session.bin + "/casekit"
    named = (args.tracks or ("dolfinx" if args.shard else DATASET_TRACKS)).split(",")
    tracks, missing = [], []
    for track in named:
        check = subprocess.run([casekit, "env", "check", track, "--json"], capture_output=True, text=True, check=True)
        status = json.loads(check.stdout)["environments"][0]
        if not status["usable"]:
            session.warn(f"track {track} is not usable here, so it is left out: {status['reason']} "
                         f"(casekit env install {track})")
            missing.append(f"{track} (not usable here: casekit env install {track})")
            continue
        tracks.append(track)
    where = _dataset_where("")
    if args.shard:
        subset, _, shard = args.shard.partition(".")
        subset, shard = (subset, shard) if subset in DATASET_SUBSETS and shard else ("", args.shard)
        for track in tracks:
            # exit 1 when a case of the shard is not in the area (the reasons are printed)
            session.run("casekit", "dataset", "build", *_dataset_where(subset), "--shard", shard, "--track", track,
                        "--build-dir", DATASET["build"], "--jobs", args.jobs, "--repeats", args.repeats,
                        success_codes=[0, 1])
        return
    if "dolfinx" not in tracks:
        session.error("the dataset needs the dolfinx track (every case is built on it; it is primary)")
    tracks = ["dolfinx", *(t for t in tracks if t != "dolfinx")]
    listed = ",".join(tracks)
    for name in DATASET_SUBSETS:  # listed first: the imported set's listing ends with what to do next
        session.log(f"the set {name} (its shards: --shard {name}.S):")
        subprocess.run([casekit, "dataset", "status", *_dataset_where(name), "--tracks", listed])
    if subprocess.run([casekit, "dataset", "status", *where, "--tracks", listed]).returncode != 0:
        session.log("not packaging: dolfinx is not complete (nox -s dataset -- --shard S for a shard listed above)")
        return
    done = json.loads(subprocess.run([casekit, "dataset", "status", *where, "--tracks", listed, "--json"],
                                     capture_output=True, text=True).stdout)["complete"]
    ready = [t for t in tracks if done.get(t)]
    missing += [f"{t} (not complete: nox -s dataset -- --shard ... --tracks {t})" for t in tracks if t not in ready]
    complete_in = {name: [t for t in tracks if json.loads(subprocess.run(
        [casekit, "dataset", "status", *_dataset_where(name), "--tracks", ",".join(tracks), "--json"],
        capture_output=True, text=True).stdout)["complete"].get(t)] for name in DATASET_SUBSETS}
    missing += [f"the set {name} on {t} (not complete: nox -s dataset -- --shard {name}.S --tracks {t})"
                for name, complete in complete_in.items() for t in tracks if t not in complete]
    complete_in = {name: [t for t in complete if t in ready] for name, complete in complete_in.items()}
    if missing and not args.partial:
        # a release is immutable: one cut without a track would need another release to add it
        session.log("not releasing: " + "; ".join(missing) + " -- build them, name the tracks to release with "
                    "--tracks, or release what is complete with --partial")
        return
    for t in missing:
        session.warn(f"left out of the release (--partial): {t}")
    built, dist = f"{DATASET['build']}-committed", f"{DATASET['build']}/release"
    session.run("casekit", "dataset", "materialise", *where, "--out", built, *(f"--track={t}" for t in ready))
    subsets = []
    for name, complete in complete_in.items():
        if "dolfinx" not in complete:
            session.warn(f"the set {name} is not complete on dolfinx, so it is left out of the release (nox -s "
                         f"dataset -- --shard {name}.S for a shard listed by casekit dataset status "
                         f"{' '.join(_dataset_where(name))})")
            continue
        out = f"{DATASET['build']}-committed-{name}"
        session.run("casekit", "dataset", "materialise", *_dataset_where(name), "--out", out,
                    *(f"--track={t}" for t in complete))
        subsets += ["--subset", f"{name}={out}"]
    session.run("casekit", "package", built, "--out", dist, "--name", DATASET["name"], "--version", args.version,
                "--about", DATASET["about"], "--import-report", f"{DATASET['sources']}/import-report.json",
                *(f"--track={t}" for t in ready), *subsets)
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
