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
) -> None:
    """Package built cases: evaluator JSONL, agent JSONL, prompts, references, schemas, dataset
    card, Croissant metadata and a manifest of checksums (byte-identical for the same build)."""
    from casekit.package.build_dist import package as run

    manifest = run(build_dir, track, out, name=name, version=version, license_id=license_id, date=date, url=url)
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
