"""``casekit package``, ``casekit verify``, ``casekit release``."""

from __future__ import annotations

from pathlib import Path

import typer

from casekit.cli.app import app, console


@app.command()
def package(
    build_dir: Path = typer.Argument(Path("build"), help="The build directory."),
    out: Path = typer.Option(Path("dist"), "--out", help="The dataset directory to write."),
    track: list[str] = typer.Option(["dolfinx"], "--track", "-t", help="Tracks to include (the first is primary)."),
    name: str = typer.Option("casekit-benchmark", "--name"),
    version: str = typer.Option("0.1.0", "--version"),
    license_id: str = typer.Option("cc-by-4.0", "--license"),
    date: str | None = typer.Option(None, "--date", help="Publication date (YYYY-MM-DD) for the metadata; "
                                    "left out by default so packaging stays byte-identical."),
    url: str | None = typer.Option(None, "--url", help="Where the dataset is published (its Croissant url)."),
    about: Path | None = typer.Option(None, "--about", help="A markdown file for the card's provenance section "
                                      "(attribution, licence of the sources, repairs)."),
) -> None:
    """Package built cases: evaluator JSONL, agent JSONL, prompts, references, schemas, dataset
    card, Croissant metadata and a manifest of checksums (byte-identical for the same build)."""
    from casekit.errors import UsageError
    from casekit.package.build_dist import package as run

    if about is not None and not about.is_file():
        raise UsageError(f"--about {about} is not a file", valid="a markdown file")
    text = about.read_text(encoding="utf-8") if about is not None else ""
    manifest = run(build_dir, track, out, name=name, version=version, license_id=license_id, date=date, url=url,
                   about=text)
    console.print(f"wrote {out}: {len(manifest['files'])} files, version {version}; check with casekit verify {out}")


@app.command()
def verify(dist: Path = typer.Argument(..., help="A packaged dataset directory.")) -> None:
    """Re-check every checksum, schema and cross-reference of a dataset (exit 1 on any mismatch)."""
    from casekit.package.verify import verify as run

    problems = run(dist)
    for p in problems:
        console.print(p.render(), markup=False)
    console.print(f"{dist}: " + ("verified" if not problems else f"{len(problems)} problem(s)"))
    raise typer.Exit(0 if not problems else 1)


@app.command()
def release(
    dist: Path = typer.Argument(..., help="The new dataset directory."),
    previous: Path | None = typer.Option(None, "--previous", help="The previous release's dataset directory "
                                         "(none: the first release)."),
    version: str | None = typer.Option(None, "--version", help="A version to use (refused if it contradicts "
                                       "the changes)."),
) -> None:
    """Compute the semantic-version bump from the changes, write the CHANGELOG entry and stamp
    the version into the dataset."""
    from casekit.package.release import release as run

    if previous is None:
        from casekit.package.release import first_release

        first, n = first_release(dist, version)
        console.print(f"first release {first}: {n} case(s); CHANGELOG.md written; check with casekit verify {dist}")
        return
    new_version, d = run(dist, previous, version)
    console.print(f"{d.level} release {new_version}: {len(d.added)} added, {len(d.changed)} changed, "
                  f"{len(d.removed)} removed case(s)" + (f", new tracks {d.new_tracks}" if d.new_tracks else ""))


@app.command()
def reproduce(
    release: Path = typer.Argument(..., help="A release directory (its manifest.json and records)."),
    sources: list[Path] = typer.Option([Path("cases")], "--sources", help="Where the release's case sources are."),
    track: str = typer.Option("dolfinx", "--track", "-t", help="The track whose released records are rebuilt."),
    sample: str = typer.Option("stratified", "--sample", help="stratified (every family, domain template and "
                               "math type), all, or comma-separated case ids."),
    build_dir: Path = typer.Option(Path("build/reproduce"), "--build-dir", help="Where the rebuild goes "
                                   "(its stage cache makes a rerun resume)."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Cases built concurrently."),
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
        ids = sorted(set(filter(None, (s.strip() for s in sample.split(",")))))
        unknown = [i for i in ids if i not in records]
        if unknown:
            raise UsageError(f"not in the release: {', '.join(unknown[:5])}", valid="ids from its cases.jsonl")
    found = sources_by_id(sources)
    missing = [i for i in ids if i not in found]
    if missing:
        raise UsageError(f"no case source declares the id(s) {', '.join(missing[:5])}"
                         + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""),
                         valid=f"--sources directories holding them (searched {', '.join(map(str, sources))})")
    console.print(f"rebuilding {len(ids)} of {len(records)} released case(s) on {track} in {build_dir}")
    run_build([found[i] for i in ids], BuildOptions(build_dir, track, repeats=1), jobs)
    problems = compare(release, build_dir, track, ids)
    for p in problems:
        console.print(p.render(), markup=False)
    console.print(f"{release}: " + (f"{len(ids)} case(s) reproduced" if not problems
                                    else f"{len(problems)} problem(s) in {len(ids)} case(s)"))
    raise typer.Exit(0 if not problems else 1)
