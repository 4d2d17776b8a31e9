"""``casekit import FORMAT FILE``: convert third-party benchmark records into case sources."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.table import Table

from casekit.cli.app import app, console
from casekit.errors import UsageError


@app.command("import")
def import_cases(
    fmt: str = typer.Argument(..., metavar="FORMAT", help="Input format (pdeagent-bench)."),
    file: Path = typer.Argument(..., help="JSONL file of records."),
    out: Path = typer.Option(Path("cases/imported"), "--out", help="Writes OUT/<family>/<id>.yaml."),
    force: bool = typer.Option(False, "--force", help="Replace case sources already in OUT."),
) -> None:
    """Convert records into casekit case sources; what cannot be mapped is kept for validation to
    report or listed in OUT/import-report.json, never dropped silently."""
    from casekit import yamlio
    from casekit.importers import IMPORTERS
    from casekit.jsonio import atomic_write_text, iter_jsonl, write_json

    convert = IMPORTERS.get(fmt)
    if not file.is_file():
        raise UsageError(f"{file} does not exist")
    if out.exists() and any(out.rglob("*.yaml")) and not force:
        raise UsageError(f"{out} already holds case sources; pass --force to replace them")
    notes: Counter[str] = Counter()
    report = []
    n = 0
    failed = 0
    for lineno, rec in iter_jsonl(file):
        try:
            imported = convert(rec)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a record of an unexpected shape
            failed += 1
            notes["failed"] += 1
            report.append({"line": lineno, "original_id": rec.get("id") if isinstance(rec, dict) else None,
                           "id": None, "notes": [{"class": "failed", "text": f"cannot convert: {exc!r}"}]})
            continue
        src = imported.source
        atomic_write_text(out / src["family"] / f"{src['id']}.yaml", yamlio.dumps(src))
        notes.update(cls for cls, _ in imported.notes)
        report.append({"line": lineno, "original_id": rec.get("id"), "id": src["id"],
                       "notes": [{"class": c, "text": t} for c, t in imported.notes]})
        n += 1
    write_json(out / "import-report.json", report)
    table = Table(title=f"imported {n} record(s) from {file.name}" + (f", {failed} not convertible" if failed else ""),
                  show_edge=False)
    table.add_column("note class")
    table.add_column("count", justify="right")
    for cls, c in sorted(notes.items()):
        table.add_row(cls, str(c))
    console.print(table)
    console.print(f"case sources in {out}/<family>/; notes in {out / 'import-report.json'}; next: "
                  f"casekit validate {out} --summary")
