"""``casekit dataset answerable``: the cases a dataset build found answerable without solving."""

from __future__ import annotations

from pathlib import Path

import typer

from casekit.cli.app import console, json_option, print_json
from casekit.cli.build import AREA_HELP, dataset_app
from casekit.errors import UsageError


@dataset_app.command("answerable")
def dataset_answerable(
    paths: list[Path] = typer.Argument(..., help="The dataset's case sources (directories or files)."),
    area: Path = typer.Option(..., "--area", help=AREA_HELP),
    tracks: str = typer.Option("dolfinx", "--tracks", help="Comma-separated tracks whose entries are read."),
    write: Path | None = typer.Option(None, "--write", metavar="FILE",
                                      help="Add them to this replace file (casekit import --replace FILE); what it "
                                      "lists already stays."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Processes that audit built entries (the time-Taylor "
                             "expansion of entries built before their trial gated it: seconds each)."),
    as_json: bool = json_option("{record id: reason}"),
) -> None:
    """The cases that a committed build rejects as answerable without solving (an inverter
    passes, a target is guessed, the reference lies near a span of visible fields, after the
    calibration was refined as far as the rules allow), and the siblings it rejects for anything
    another draw may not have (also a calibration too coarse for the drawn solution), by anchor
    record: a record released as it was is replaced by a sibling on the next ``casekit import
    --repair --replace FILE``, a sibling by the next clean draw after the one the build rejected."""
    from casekit.build.answerable import answerable
    from casekit.build.shards import Area, read_sources
    from casekit.importers.replacements import merge_into
    from casekit.tracks import TRACKS

    names = [t.strip() for t in tracks.split(",") if t.strip()]
    for t in names:
        if t not in TRACKS:
            raise UsageError(f"unknown track {t!r}", valid=", ".join(TRACKS.names()))
    found = answerable(Area(area), read_sources(paths), names, jobs)
    merged = merge_into(write, found) if write is not None else None
    if as_json:
        print_json(found.to_json())
        return
    for rid, why in sorted(found.records.items()):
        console.print(f"{rid}: {why}", markup=False)
    for rid, draws in sorted(found.draws.items()):
        for k, why in sorted(draws.items()):
            console.print(f"{rid} (sibling draw {k}): {why}", markup=False)
    n_draws = sum(len(d) for d in found.draws.values())
    console.print(f"{len(found.records)} record(s) answerable without solving and {n_draws} sibling draw(s) to draw "
                  "again"
                  + (f"; {write} lists {len(merged.ids())} record(s): casekit import ... --repair --replace "
                     f"{write} --only ID ..." if merged is not None else ""), markup=False)
