"""``casekit import FORMAT FILE``: convert third-party benchmark records into case sources."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from casekit.cli.app import Output, app, jobs_option, json_option
from casekit.errors import CasekitError, UsageError
from casekit.importers import replacements


@app.command("import")
def import_cases(
    fmt: str = typer.Argument(..., metavar="FORMAT", help="Input format (pdeagent-bench)."),
    file: Path = typer.Argument(..., help="JSONL file of records."),
    out: Path = typer.Option(Path("cases/imported"), "--out", help="Writes OUT/<family>/<id>.yaml."),
    force: bool = typer.Option(False, "--force", help="Replace the case sources already in OUT: afterwards OUT "
                               "holds exactly this import's sources (others there are removed)."),
    repair: bool = typer.Option(False, "--repair", help="Keep what each record means and re-derive what casekit "
                                "derives (forcing, boundary and initial data, leak-free); foreign keys go; "
                                "records that cannot be kept faithfully are listed, not written; every kept "
                                "case is validated and one with findings is not kept either."),
    jobs: int = jobs_option(os.cpu_count() or 1, "Processes that validate the repaired cases."),
    replace: Path | None = typer.Option(None, "--replace", metavar="FILE",
                                        help="Replace file (casekit dataset answerable --write): records that a "
                                        "build found answerable without solving, or whose numerical reference it "
                                        "could not certify, are replaced by siblings like records whose solution "
                                        "leaks, and sibling draws it rejected are skipped for the next clean one "
                                        "(with --repair)."),
    only: list[str] = typer.Option([], "--only", metavar="ID",
                                   help="Re-import only these records (record ids as in FILE, repeatable) into "
                                   "an OUT that an earlier import wrote: their sources and report entries are "
                                   "replaced, every other record's stay as they are."),
    settings_only: bool = typer.Option(False, "--settings-only",
                                       help="Re-map only the solve settings (calibration, numerical reference "
                                       "levels) of the sources an earlier import wrote into OUT -- every record's, "
                                       "or those of --only -- keeping their solutions (a sibling its draw) and "
                                       "everything else: for a change of the importer's settings mapping (the "
                                       "build validates every source again)."),
    as_json: bool = json_option("the counts of records imported, not convertible and per note class"),
) -> None:
    """Convert records into casekit case sources; what cannot be mapped is kept for validation to
    report or listed in OUT/import-report.json, never dropped silently."""
    import functools
    import inspect

    from casekit.importers import IMPORTERS
    from casekit.jsonio import write_json

    convert = IMPORTERS.get(fmt)
    if settings_only and (replace is not None or force):
        raise UsageError("--settings-only keeps every source but its solve settings: it takes neither --replace "
                         "nor --force", valid="--settings-only [--only ID ...] with the earlier import's --repair")
    replaced = replacements.read(replace) if replace is not None else replacements.Replacements()
    if replaced.ids() and not repair:
        raise UsageError("--replace needs --repair (a replacement is a sibling, drawn and validated by the repair)")
    if repair:
        if "repair" not in inspect.signature(convert).parameters:
            raise UsageError(f"the {fmt} importer cannot repair records", valid="casekit import without --repair")
        convert = functools.partial(convert, repair=True)
    if not file.is_file():
        raise UsageError(f"{file} does not exist")
    shown = Output(as_json)
    if settings_only:
        _settings_only(file, convert, out, only, shown)
        return
    earlier = _earlier_report(out, only) if only else None
    if earlier is None and out.exists() and any(out.rglob("*.yaml")) and not force:
        raise UsageError(f"{out} already holds case sources; pass --force to replace them",
                         valid="--force, or --only ID to re-import some records")
    notes: Counter[str] = Counter()
    report: list[dict[str, Any]] = []
    n = 0
    failed = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-import-", dir=out.parent))
    try:
        n, failed = _convert_all(file, convert, staging, notes, report, repair, jobs, set(only) or None, replaced)
        written = {f.relative_to(staging) for f in staging.rglob("*.yaml")}
        if earlier is not None:  # the records not asked for keep their sources and entries
            missing = sorted(set(only) - {e["original_id"] for e in report})
            if missing:
                raise UsageError(f"--only: no record with id {', '.join(missing)} in {file}",
                                 valid="record ids as FILE gives them (the report's original_id)")
            redone = {e["line"] for e in report}
            stale = {Path(_family(e)) / f"{e['id']}.yaml" for e in earlier if e["line"] in redone and e.get("id")}
            report = sorted([e for e in earlier if e["line"] not in redone] + report, key=lambda e: e["line"])
        else:
            stale = None
        write_json(staging / "import-report.json", report)
        for f in sorted(staging.rglob("*")):  # all or nothing: a bad file stops before anything lands
            if f.is_file():
                dest = out / f.relative_to(staging)
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(f, dest)
        for old in sorted(out.rglob("*.yaml")):  # --force replaces the import whole: a source the
            rel = old.relative_to(out)  # records no longer give does not linger (--only: theirs)
            if rel not in written and (stale is None or rel in stale):
                old.unlink()
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _summary(file, out, n, failed, notes, shown)


def _settings_only(file: Path, convert: Any, out: Path, only: list[str], shown: Output) -> None:
    from casekit.importers.settings_only import remap
    from casekit.jsonio import write_json

    report = _earlier_report(out, only, what="--settings-only")
    if only:
        missing = sorted(set(only) - {e.get("original_id") for e in report})
        if missing:
            raise UsageError(f"--only: no record with id {', '.join(missing[:5])} in {out / 'import-report.json'}",
                             valid="record ids as FILE gives them (the report's original_id)")
    changed, same, skipped = remap(file, convert, out, report, set(only) or None)
    write_json(out / "import-report.json", report)
    for why in skipped:
        shown.say(f"skipped {why}")
    shown.say(f"settings re-mapped: {len(changed)} source(s) changed, {same} unchanged, {len(skipped)} "
              f"skipped; next: casekit validate {out} --summary, or build (it validates)")
    shown.result({"out": str(out), "report": str(out / "import-report.json"), "settings_only": True,
                  "changed": len(changed), "unchanged": same, "skipped": list(skipped)})


def _earlier_report(out: Path, only: list[str], what: str = "--only") -> list[dict[str, Any]]:
    """The report of the import in ``out`` that ``--only`` amends."""
    from casekit.jsonio import read_json

    path = out / "import-report.json"
    if not path.is_file():
        raise UsageError(f"{what} amends an earlier import, and {path} does not exist",
                         valid=f"a full import into {out} first (without --only)")
    try:
        entries = read_json(path)
        if not isinstance(entries, list) or not all(isinstance(e, dict) and "line" in e for e in entries):
            raise ValueError("not a list of entries with a line number")
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} is not an import report: {exc}") from None
    return entries


def _family(entry: dict[str, Any]) -> str:
    """The family directory of a report entry's source (an entry with an id carries its anchor)."""
    return str(entry["anchor"]["family"])


#: note classes that mean a record's problem is not fully understood: not kept on --repair
UNFAITHFUL = ("unmapped", "inconsistent")


def _convert_all(file: Path, convert: Any, staging: Path, notes: Counter[str], report: list[dict[str, Any]],
                 repair: bool = False, jobs: int = 1, only: set[str] | None = None,
                 replaced: replacements.Replacements | None = None) -> tuple[int, int]:
    from casekit import yamlio
    from casekit.jsonio import atomic_write_text, iter_jsonl

    n = failed = 0
    kept: list[tuple[dict[str, Any], dict[str, Any], list[tuple[str, str]]]] = []
    for lineno, rec in iter_jsonl(file):
        if only is not None and not (isinstance(rec, dict) and rec.get("id") in only):
            continue
        try:
            if not isinstance(rec, dict):
                raise TypeError("a record must be a JSON object")
            imported = convert(rec)
        except (KeyError, TypeError, ValueError, AttributeError, CasekitError) as exc:  # an unexpected shape
            failed += 1
            notes["failed"] += 1
            original = rec.get("id") if isinstance(rec, dict) and isinstance(rec.get("id"), str) else None
            report.append({"line": lineno, "original_id": original, "id": None,
                           "notes": [{"class": "failed", "text": f"cannot convert: {exc!r}"[:500]}]})
            continue
        src = imported.source
        entry = {"line": lineno, "original_id": rec["id"], "id": src["id"], "anchor": imported.anchor,
                 "notes": [{"class": c, "text": t} for c, t in imported.notes]}
        unfaithful = [t for c, t in imported.notes if c in UNFAITHFUL]
        if repair and unfaithful:
            failed += 1
            notes["not_kept"] += 1
            entry["id"] = None
            entry["notes"].append({"class": "not_kept", "text": "not kept: " + "; ".join(
                t.removesuffix("; kept as given") for t in unfaithful)})
            report.append(entry)
            continue
        report.append(entry)
        kept.append((entry, src, imported.notes))
    findings = _validate_all([src for _, src, _ in kept], jobs) if repair else [[] for _ in kept]
    replaced = replaced or replacements.Replacements()
    unknown = sorted(replaced.ids() - {entry["original_id"] for entry in report})
    if unknown and only is None:
        raise UsageError(f"--replace names records that {file} does not hold: {', '.join(unknown[:5])}",
                         valid="record ids as the input file gives them")
    answered = {}  # index -> why a build cannot release it (answerable, uncertified), otherwise clean: replaced
    for i, (entry, _, _) in enumerate(kept):
        if entry["original_id"] in replaced.records and not findings[i]:
            answered[i] = f"a build cannot release it as it is: {replaced.records[entry['original_id']]}"
            findings[i] = [f"{SOLUTION_POINTER}: {answered[i]}"]
    # a record whose only findings are its manufactured solution's (it can be read from the agent
    # view) is replaced by a sibling: the same problem with a new solution (casekit.authoring.sibling)
    replaceable = [i for i, problems in enumerate(findings) if problems and all(
        p.startswith(SOLUTION_POINTER) for p in problems)]
    siblings = dict(zip(replaceable, _replace_all([(kept[i][1], kept[i][0]["original_id"],
                                                    replaced.rejected_draws(kept[i][0]["original_id"]))
                                                   for i in replaceable], jobs), strict=True))
    for i, ((entry, src, record_notes), problems) in enumerate(zip(kept, findings, strict=True)):
        why = answered.get(i) or f"{len(problems)} validator finding(s): " + "; ".join(problems[:3])
        drawn = siblings.get(i)
        if drawn is not None and drawn[0] is not None:
            src, attempt, _ = drawn
            what = "record cannot be released as it is" if i in answered else \
                "record's manufactured solution cannot be released"
            entry["notes"].append({"class": "replaced", "text": f"replaced by a sibling (draw {attempt}): the "
                                   f"{what} ({why})"})
            provenance = {"anchor": entry["original_id"], "status": "replaced", "why": why}
            notes["replaced"] += 1
        elif problems:  # a repaired case is committed clean, or not at all
            failed += 1
            notes["not_kept"] += 1
            entry["id"] = None
            entry["notes"].append({"class": "not_kept", "text": f"not kept: {why}" + (
                f"; no sibling validates: {'; '.join(drawn[2])}" if drawn is not None else "")})
            continue
        else:
            repaired = [t for c, t in record_notes if c == "repaired"]
            provenance = {"anchor": entry["original_id"], "status": "repaired" if repaired else "kept",
                          "why": "; ".join(repaired)}
        if repair:  # the case says where it comes from (the record's evaluator side carries it on)
            entry["provenance"] = src["provenance"] = provenance
        atomic_write_text(staging / src["family"] / f"{src['id']}.yaml", yamlio.dumps(src))
        notes.update(cls for cls, _ in record_notes)
        n += 1
    return n, failed


#: where the validator locates findings about a manufactured solution (leaks, inversions)
SOLUTION_POINTER = "/manufactured_solution"


def _replace(item: tuple[dict[str, Any], str, dict[int, str]]) -> tuple[dict[str, Any] | None, int, list[str]]:
    from casekit.authoring.sibling import SIBLING_NOTES, clean_sibling

    src, anchor, rejected = item
    return clean_sibling(src, anchor, notes=SIBLING_NOTES.replace("{anchor!r}", repr(anchor)), rejected=rejected)


def _replace_all(items: list[tuple[dict[str, Any], str, dict[int, str]]], jobs: int
                 ) -> list[tuple[dict[str, Any] | None, int, list[str]]]:
    return _each(_replace, items, jobs, "drew a sibling of", lambda item, drawn: item[1] + (
        f": draw {drawn[1]}" if drawn[0] is not None else f": none of {drawn[1]} draws validates"))


def _findings(src: dict[str, Any]) -> list[str]:
    from casekit.validate import check_source

    return [f"{p.pointer or '/'}: {p.message}" for p in check_source(src)]


def _validate_all(sources: list[dict[str, Any]], jobs: int) -> list[list[str]]:
    """The validator's findings of every repaired source (in ``jobs`` processes), with a progress
    line on stderr per source (validation takes seconds to minutes a source)."""
    return _each(_findings, sources, jobs, "validated", lambda src, found: src["id"] + (
        f": {len(found)} finding(s)" if found else ": clean"))


def _each(fn: Any, items: list[Any], jobs: int, verb: str, describe: Any) -> list[Any]:
    """``fn`` over ``items`` in order (in ``jobs`` processes), saying on stderr ``[k/n] verb ...``
    as each finishes: an import of fifty records runs for an hour, and it must show it is alive."""
    from casekit.cli.output import console_err

    def done(k: int, item: Any, result: Any) -> Any:
        console_err.print(f"[{k}/{len(items)}] {verb} {describe(item, result)}", markup=False, highlight=False)
        return result

    if jobs <= 1 or len(items) < 2:
        return [done(k, item, fn(item)) for k, item in enumerate(items, 1)]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return [done(k, item, r) for k, (item, r) in enumerate(zip(items, pool.map(fn, items), strict=True), 1)]


def _summary(file: Path, out: Path, n: int, failed: int, notes: Counter[str], shown: Output) -> None:
    table = Table(title=f"imported {n} record(s) from {file.name}" + (f", {failed} not convertible" if failed else ""),
                  show_edge=False)
    table.add_column("note class")
    table.add_column("count", justify="right")
    for cls, c in sorted(notes.items()):
        table.add_row(cls, str(c))
    shown.console.print(table)
    shown.say(f"case sources in {out}/<family>/; notes in {out / 'import-report.json'}; next: "
              f"casekit validate {out} --summary")
    shown.result({"file": str(file), "out": str(out), "report": str(out / "import-report.json"), "imported": n,
                  "not_convertible": failed, "notes": dict(sorted(notes.items()))})
