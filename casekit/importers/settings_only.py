"""Re-map the solve settings of an earlier import, keeping everything else.

When an importer's mapping of solve settings changes (how a record's mesh size becomes the
calibration's cells across, say), a full re-import would redraw and revalidate every sibling --
hours for a dataset -- although neither the manufactured solutions nor anything the validator
judges depend on those settings.  ``casekit import ... --settings-only`` converts the records
again and writes into each source the earlier import left only the keys of :data:`SETTINGS`
(the calibration, and numerical reference levels where the source has them), and into its report
entry the conversion's notes (the validation's notes -- replaced, not kept -- stay).  A record
the earlier import did not keep stays as it is.  Every source is validated again by the build
before it is built; the settings keys are not what validity rules read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError

#: the source keys that are solve settings
SETTINGS = ("calibration", "reference")
#: the report note classes that come from validation, not from the conversion
VALIDATION_NOTES = ("replaced", "not_kept")


def remap(file: Path, convert: Callable[[dict[str, Any]], Any], out: Path, report: list[dict[str, Any]],
          only: set[str] | None) -> tuple[list[str], int, list[str]]:
    """Rewrite the settings of the sources in ``out`` that ``report`` (the earlier import's
    report, amended in place) lists, for the records of ``file`` (those of ``only`` if given):
    (ids whose settings changed, sources unchanged, records skipped with why)."""
    from casekit import yamlio
    from casekit.jsonio import atomic_write_text, iter_jsonl
    from casekit.model.source import load_source_dict

    by_line = {e["line"]: e for e in report}
    changed: list[str] = []
    same = 0
    skipped: list[str] = []
    for lineno, rec in iter_jsonl(file):
        rid = rec.get("id") if isinstance(rec, dict) else None
        if only is not None and rid not in only:
            continue
        entry = by_line.get(lineno)
        if entry is None or entry.get("original_id") != rid:
            skipped.append(f"{rid}: not in the earlier import's report at line {lineno}")
            continue
        if not entry.get("id"):
            skipped.append(f"{rid}: not kept by the earlier import (its re-import maps the settings anew)")
            continue
        path = out / str(entry["anchor"]["family"]) / f"{entry['id']}.yaml"
        if not path.is_file():
            skipped.append(f"{rid}: its source {path} is missing")
            continue
        try:
            imported = convert(rec)
        except (KeyError, TypeError, ValueError, AttributeError, CasekitError) as exc:  # as the import reports it
            skipped.append(f"{rid}: cannot convert it any more: {exc!r}"[:500])
            continue
        source = load_source_dict(path)
        updated = dict(source)
        for key in SETTINGS:  # a sibling has no reference levels (its solution is its reference)
            if key in imported.source and (key in source or key == "calibration"):
                updated[key] = imported.source[key]
        entry["notes"] = [{"class": c, "text": t} for c, t in imported.notes] + [
            n for n in entry["notes"] if n["class"] in VALIDATION_NOTES]
        if updated == source:
            same += 1
            continue
        atomic_write_text(path, yamlio.dumps(updated))
        changed.append(str(entry["id"]))
    return changed, same, skipped
