"""``casekit track``: the tracks (FEM libraries) and a skeleton for a new one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from casekit.cli.app import app, command_group, console, json_option, print_json

track_app = command_group("Tracks: list them, or write a working skeleton of a new one.")
app.add_typer(track_app, name="track")


@track_app.command("list")
def track_list(as_json: bool = json_option("the listing")) -> None:
    """The registered tracks: language, families, domains, submission files."""
    from casekit.tracks import TRACKS

    rows: list[dict[str, Any]] = [{"name": n, "title": t.title, "language": t.language, "families": list(t.families),
                                   "domains": list(t.domains) or "all", "submission": list(t.submission_files)}
                                  for n, t in TRACKS.items()]
    if as_json:
        print_json(rows)
        return
    table = Table(show_edge=False)
    for col in ("track", "library", "language", "families", "domains", "submission"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["title"], r["language"], ", ".join(r["families"]),
                      r["domains"] if isinstance(r["domains"], str) else ", ".join(r["domains"]),
                      ", ".join(r["submission"]))
    console.print(table)


@track_app.command("new")
def track_new(
    name: str = typer.Argument(..., help="The track's name (a lower-case identifier, e.g. ngsolve)."),
    language: str = typer.Option("python", "--language", help="python (the submission is solve(case_spec)) or "
                                 "cpp (a C++ program built with CMake in the sandbox, as deal.II's)."),
    title: str = typer.Option("", "--title", help="The library's name and version as prompts say it."),
    root: Path = typer.Option(None, "--root", help="The casekit checkout to write into (default: the one that "
                              "holds the current directory)."),
) -> None:
    """Write casekit/tracks/NAME (registration, environment, container, guide, scaffold, a working
    finite-difference solver) and tests/tracks/NAME into a casekit checkout; then follow
    docs/adding-a-track.md."""
    from casekit.tracks.new import new_track

    for path in new_track(name, language, title, root):
        console.print(f"wrote {path}")
    console.print(f"next: pytest tests/tracks -k {name}  |  casekit track list  |  docs/adding-a-track.md")
