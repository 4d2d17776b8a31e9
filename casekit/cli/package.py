"""``casekit package``, ``casekit verify``, ``casekit release``."""

from __future__ import annotations

from pathlib import Path

import typer

from casekit.cli.app import Output, app, jobs_option, json_option


@app.command()
def package(
    build_dir: Path = typer.Argument(Path("build"), help="The build directory."),
    out: Path = typer.Option(Path("dist"), "--out", help="The dataset directory to write."),
    track: list[str] = typer.Option(["dolfinx"], "--track", "-t", help="Tracks to include (the first is primary)."),
    name: str = typer.Option("casekit-benchmark", "--name", help="The dataset's name (its directory under "
                             "--releases, its card's and Croissant metadata's title)."),
    version: str = typer.Option("0.1.0", "--version", help="The dataset's version (semver)."),
    license_id: str = typer.Option("cc-by-4.0", "--license", help="The dataset's licence (an SPDX-style id, as "
                                   "Hugging Face cards name it)."),
    date: str | None = typer.Option(None, "--date", help="Publication date (YYYY-MM-DD) for the metadata; "
                                    "left out by default so packaging stays byte-identical."),
    url: str | None = typer.Option(None, "--url", help="Where the dataset is published (its Croissant url)."),
    about: Path | None = typer.Option(None, "--about", help="A markdown file for the card's provenance section "
                                      "(attribution, licence of the sources, repairs)."),
    import_report: Path | None = typer.Option(None, "--import-report", help="The import report of imported "
                                              "sources (casekit import --repair): the card tables the anchor's "
                                              "records against the release's (kept, repaired, replaced)."),
    previous: Path | None = typer.Option(None, "--previous", help="The previous release (default: the latest "
                                         "under --releases/<name>, if any): none of its cases may be left out."),
    releases: Path = typer.Option(Path("releases"), "--releases", help="Where the releases are."),
    allow_removal: str = typer.Option("", "--allow-removal", help="Comma-separated ids of the previous "
                                      "release's cases that may be left out."),
    subset: list[str] = typer.Option([], "--subset", help="NAME=BUILD_DIR: a further set of cases (the authored "
                                     "sample: authored=DIR) packaged as its own configurations NAME_agent, NAME and "
                                     "NAME_<track>, on the --track tracks its build directory holds (repeatable)."),
    as_json: bool = json_option("the cases per track and family and the files written"),
) -> None:
    """Package built cases: evaluator JSONL, agent JSONL, prompts, references, schemas, dataset
    card, Croissant metadata and a manifest of checksums (byte-identical for the same build).
    A build directory written by casekit dataset materialise carries its build's machine time,
    which the card states.  Prints the cases per track and family; refuses to leave out a case of
    the previous release unless --allow-removal names it, and a case id in two sets of cases."""
    from casekit.errors import UsageError
    from casekit.package.build_dist import package as run
    from casekit.package.release import versions

    if about is not None and not about.is_file():
        raise UsageError(f"--about {about} is not a file", valid="a markdown file")
    text = about.read_text(encoding="utf-8") if about is not None else ""
    report = None
    if import_report is not None:
        from casekit.jsonio import read_json

        if not import_report.is_file():
            raise UsageError(f"--import-report {import_report} is not a file", valid="an import-report.json")
        report = read_json(import_report)
        if not isinstance(report, list):
            raise UsageError(f"--import-report {import_report} is not an import report (a JSON list of entries)")
    if previous is None and (found := versions(releases / name)):
        previous = releases / name / found[-1]
    if previous is not None and not previous.is_dir():
        raise UsageError(f"--previous {previous} is not a release directory", valid=f"one under {releases / name}")
    allowed = frozenset(filter(None, (s.strip() for s in allow_removal.split(","))))
    subsets: dict[str, Path] = {}
    for spec in subset:
        sname, sep, sdir = spec.partition("=")
        if not sep or not sname or not sdir:
            raise UsageError(f"--subset {spec!r} is not NAME=BUILD_DIR", valid="e.g. --subset authored=build/authored")
        if sname in subsets:
            raise UsageError(f"--subset {sname} is given twice")
        if not Path(sdir).is_dir():
            raise UsageError(f"--subset {spec}: {sdir} is not a directory", valid="a build directory")
        subsets[sname] = Path(sdir)
    manifest = run(build_dir, track, out, name=name, version=version, license_id=license_id, date=date, url=url,
                   about=text, previous=previous, allow_removal=allowed, import_report=report, subsets=subsets)
    shown = Output(as_json)
    for t, families in manifest["counts"].items():
        shown.say(f"{t}: {sum(families.values())} case(s): " + ", ".join(f"{f} {n}" for f, n in families.items()))
    shown.say(f"wrote {out}: {len(manifest['files'])} files, version {version}"
              + (f", every case of {previous} kept" if previous is not None and not allowed else
                 f", {len(allowed)} case(s) of {previous} allowed out" if previous is not None else "")
              + f"; check with casekit verify {out}")
    shown.result({"out": str(out), "name": name, "version": version, "counts": manifest["counts"],
                  "files": len(manifest["files"]), "previous": str(previous) if previous is not None else None,
                  "allowed_removal": sorted(allowed)})


@app.command()
def verify(dist: Path = typer.Argument(..., help="A packaged dataset directory."),
           as_json: bool = json_option("the problems found")) -> None:
    """Re-check every checksum, schema and cross-reference of a dataset (exit 1 on any mismatch)."""
    from casekit.package.verify import verify as run

    problems = run(dist)
    shown = Output(as_json)
    for p in problems:
        shown.say(p.render())
    shown.say(f"{dist}: " + ("verified" if not problems else f"{len(problems)} problem(s)"))
    shown.result({"dataset": str(dist), "verified": not problems, "problems": [p.to_dict() for p in problems]})
    raise typer.Exit(0 if not problems else 1)


@app.command()
def release(
    dist: Path = typer.Argument(..., help="The packaged dataset directory (left as it is)."),
    previous: Path | None = typer.Option(None, "--previous", help="The latest release, releases/<name>/<version> "
                                         "(none: the first release)."),
    version: str | None = typer.Option(None, "--version", help="A version to use (refused if it contradicts "
                                       "the changes, exists or is not above the latest release)."),
    releases: Path | None = typer.Option(None, "--releases", help="Where releases go (default: beside --previous, "
                                         "else releases/)."),
    date: str | None = typer.Option(None, "--date", help="The changelog entry's date (default: today)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the bump and the changes; write nothing."),
    as_json: bool = json_option("the release: version, bump, changes and changelog entry"),
) -> None:
    """Cut a release: a new, immutable releases/<name>/<version>/ holding the dataset with its
    version stamped in, a CHANGELOG.md keeping every earlier entry, and a manifest of checksums.
    The bump follows what an agent or a score sees (README: Releases)."""
    from casekit.package.release import plan
    from casekit.package.release import release as run

    shown = Output(as_json)
    p = plan(dist, previous, version, releases, date) if dry_run else run(dist, previous, version, releases, date)
    d = p.diff
    shown.result({"target": str(p.target), "version": p.version, "previous": p.previous, "dry_run": dry_run,
                  "level": d.level if d else "first", "cases": p.n_cases,
                  "added": d.added if d else [], "changed": d.changed if d else {},
                  "removed": d.removed if d else [], "metadata": d.metadata if d else {},
                  "tracks": d.tracks if d else [], "entry": p.entry})
    if dry_run:
        kind = f"{d.level} release after {p.previous}" if d else "first release"
        shown.say(f"would write {p.target} ({kind}; dry run, nothing written)\n")
        shown.say(p.entry.rstrip())
    elif d is None:
        shown.say(f"first release {p.version}: {p.n_cases} case(s) in {p.target}; check with casekit verify {p.target}")
    else:
        shown.say(f"{d.level} release {p.version} in {p.target}: {len(d.added)} added, {len(d.changed)} changed, "
                  f"{len(d.removed)} removed case(s), {len(d.metadata)} with new metadata"
                  + (f"; {', '.join(d.tracks)}" if d.tracks else ""))


@app.command()
def reproduce(
    release: Path = typer.Argument(..., help="A release directory (its manifest.json and records)."),
    sources: list[Path] = typer.Option([Path("cases")], "--sources", help="Where the release's case sources are."),
    track: str = typer.Option("dolfinx", "--track", "-t", help="The track whose released records are rebuilt."),
    sample: str = typer.Option("stratified", "--sample", help="stratified (every family, domain template and "
                               "math type), all, or comma-separated case ids."),
    build_dir: Path = typer.Option(Path("build/reproduce"), "--build-dir", help="Where the rebuild goes "
                                   "(its stage cache makes a rerun resume)."),
    jobs: int = jobs_option(1, "Cases built concurrently."),
    as_json: bool = json_option("the cases rebuilt and the problems found"),
) -> None:
    """Rebuild a sample of a release's cases from their sources and check that they are the released
    cases: the same agent view, source and thresholds' settings, the same reference (same library
    versions) and a calibration error within a factor 1.5 (exit 1 otherwise)."""
    from casekit.build.pipeline import BuildOptions
    from casekit.build.run import build as run_build
    from casekit.errors import UsageError
    from casekit.package.reproduce import compare, released_records, sources_by_id, stratified

    records = released_records(release, track)
    if sample == "stratified":
        ids = stratified(records.values())
    elif sample == "all":
        ids = sorted(records)
    else:
        from casekit.ids import no_such_case, resolve

        names = sorted(set(filter(None, (s.strip() for s in sample.split(",")))))
        for n in names:
            if resolve(n, records) is None:
                raise no_such_case(n, [*records, *(r.get("public_id", "") for r in records.values())], str(release))
        ids = sorted({str(resolve(n, records)) for n in names})
    found = sources_by_id(sources)
    missing = [i for i in ids if i not in found]
    if missing:
        raise UsageError(f"no case source declares the id(s) {', '.join(missing[:5])}"
                         + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""),
                         valid=f"--sources directories holding them (searched {', '.join(map(str, sources))})")
    shown = Output(as_json)
    shown.say(f"rebuilding {len(ids)} of {len(records)} released case(s) on {track} in {build_dir}")
    run_build([found[i] for i in ids], BuildOptions(build_dir, track, repeats=1), jobs)
    problems = compare(release, build_dir, track, ids)
    for p in problems:
        shown.say(p.render())
    shown.say(f"{release}: " + (f"{len(ids)} case(s) reproduced" if not problems
                                else f"{len(problems)} problem(s) in {len(ids)} case(s)"))
    shown.result({"release": str(release), "track": track, "cases": ids, "reproduced": not problems,
                  "problems": [p.to_dict() for p in problems]})
    raise typer.Exit(0 if not problems else 1)
