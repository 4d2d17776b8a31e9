"""The release beside its anchor: how many of the anchor's records are released, and how
(kept as given, repaired, replaced by a sibling), per family x math type and family x domain.

The anchor's side comes from the import report (``casekit import --repair`` writes each record's
family, math type and domain as the anchor classifies it, and its provenance); the release's side
from the released records (``evaluation_metadata.provenance``).  A record is released, not
imported (the import report's ``"id": null``), rejected by the build (the build directory's
report names it with the build's reason, :func:`casekit.package.build_dist.rejected`) or, imported
but with no outcome in the build, not built.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from casekit.errors import CasekitError

STATUSES = ("kept", "repaired", "replaced")
#: the columns of a record that is not released, in the tables' order
NOT_IMPORTED, REJECTED, NOT_BUILT = "not imported", "rejected by the build", "not built"
#: the column of the anchor's records
ANCHOR = "anchor records"


def released_status(records: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Released case id -> its provenance status (cases without one are authored: left out)."""
    out = {}
    for r in records:
        prov = r.get("evaluation_metadata", {}).get("provenance")
        if prov:
            out[r["id"]] = prov["status"]
    return out


def _outcome(entry: dict[str, Any], released: Mapping[str, str], rejected: Mapping[str, str]) -> str:
    cid = entry.get("id")
    if not cid:
        return NOT_IMPORTED
    return released.get(cid) or (REJECTED if cid in rejected else NOT_BUILT)


def _anchor(entry: dict[str, Any]) -> dict[str, Any]:
    anchor = entry.get("anchor")
    if not anchor:
        raise CasekitError(f"import report entry {entry.get('original_id')!r} has no anchor classification",
                           valid="an import report written by `casekit import ... --repair` of this version")
    return anchor


def _rows(report: list[dict[str, Any]], released: Mapping[str, str], rejected: Mapping[str, str],
          key: tuple[str, ...]) -> list[tuple[tuple[str, ...], Counter[str]]]:
    counts: dict[tuple[str, ...], Counter[str]] = {}
    for entry in report:
        anchor = _anchor(entry)
        c = counts.setdefault(tuple(str(anchor.get(k, "?")) for k in key), Counter())
        c[ANCHOR] += 1
        outcome = _outcome(entry, released, rejected)
        c[outcome] += 1
        if outcome in STATUSES:
            c["released"] += 1
    return sorted(counts.items())


def _columns(report: list[dict[str, Any]], released: Mapping[str, str], rejected: Mapping[str, str]
             ) -> tuple[str, ...]:
    """The tables' columns: ``not built`` only where some record is."""
    built = all(_outcome(e, released, rejected) != NOT_BUILT for e in report)
    return (ANCHOR, "released", *STATUSES, NOT_IMPORTED, REJECTED, *(() if built else (NOT_BUILT,)))


def table(report: list[dict[str, Any]], records: Iterable[dict[str, Any]], key: tuple[str, ...],
          rejected: Mapping[str, str] | None = None) -> str:
    """A markdown table of the anchor's records against the release's, grouped by ``key``
    (the anchor's fields: ``family``, ``math_type``, ``domain``; headed as the anchor's), with a
    total row; ``rejected`` (case id -> the build's reason) are the cases the build rejected."""
    released, rejected = released_status(records), rejected or {}
    cols = _columns(report, released, rejected)
    rows = [f"| {' | '.join('anchor ' + k.replace('_', ' ') for k in key)} | {' | '.join(cols)} |",
            "|" + "---|" * (len(key) + len(cols))]
    total: Counter[str] = Counter()
    for group, c in _rows(report, released, rejected, key):
        total.update(c)
        rows.append(f"| {' | '.join(group)} | {' | '.join(str(c[col]) for col in cols)} |")
    rows.append(f"| **total** |{' |' * (len(key) - 1)} {' | '.join(f'**{total[col]}**' for col in cols)} |")
    return "\n".join(rows)


def _import_status(entry: dict[str, Any]) -> str | None:
    prov = entry.get("provenance")
    return prov.get("status") if isinstance(prov, dict) else None


def section(report: list[dict[str, Any]], records: list[dict[str, Any]],
            rejected: Mapping[str, str] | None = None) -> str:
    """The card's section: what the tables count, the two tables, and each record the build
    rejected with the build's reason (``rejected``: case id -> reason)."""
    released, rejected = released_status(records), rejected or {}
    outcomes = Counter(_outcome(e, released, rejected) for e in report)
    n_released = sum(outcomes[s] for s in STATUSES)
    imported = Counter(s for e in report if e.get("id") and (s := _import_status(e)))
    not_released = [e for e in report if _outcome(e, released, rejected) in (REJECTED, NOT_BUILT)]
    out = [
        f"How the anchor's {len(report)} records are released, counted by the generated tables below: each "
        "record once, grouped by the anchor's own family, math type and domain (as `import-report.json` "
        "records them; a released case's math type or domain template may differ). "
        f"*Released* ({n_released}): the records with a case in this release, by the case's provenance status "
        "(`evaluation_metadata.provenance`: anchor id, status, why) -- *kept* as given, *repaired* (casekit "
        "re-derived its forcing, boundary and initial data from its manufactured solution, leak-free) or "
        "*replaced* (a sibling: the same family, domain, parameters, boundary layout, time window and grid with a "
        "new manufactured solution, drawn with a seed derived from the record's id, because the record's own "
        "solution can be read from what the agent sees). "
        f"*Not imported* ({outcomes[NOT_IMPORTED]}): the records the import made no case source of, each in "
        "`import-report.json` with `\"id\": null` and its reason. "
        f"*Rejected by the build* ({outcomes[REJECTED]}): records imported as a case source whose case the "
        "build rejected" + (", named below with the build's reason" if outcomes[REJECTED] else "")
        + (f"; *not built* ({outcomes[NOT_BUILT]}): records imported as a case source that the build directory "
           "holds no outcome for (neither a record nor a rejection in its `build-report.json`), named below"
           if outcomes[NOT_BUILT] else "") + ".",
    ]
    if imported:
        by_import = Counter(_import_status(e) or "?" for e in not_released)
        out[0] += (" The import's own counts (`import-report.json`: "
                   + ", ".join(f"{s} {imported[s]}" for s in (*STATUSES, *sorted(set(imported) - set(STATUSES)))
                               if imported[s])
                   + ") include the records the build did not release"
                   + (" (" + ", ".join(f"{n} {s} by the import" for s, n in sorted(by_import.items())) + ")"
                      if not_released else "") + ".")
    for outcome, title in ((REJECTED, "Rejected by the build"), (NOT_BUILT, "Not built")):
        named = [e for e in report if e.get("id") and _outcome(e, released, rejected) == outcome]
        if named:
            out += ["", f"{title} (not released):", ""]
        for e in named:
            status = _import_status(e)
            why = " ".join(str(rejected[e["id"]]).split()) if outcome == REJECTED else "no outcome in the build"
            out.append(f"- `{e['id']}` (anchor record `{e.get('original_id')}`"
                       + (f", {status} by the import" if status else "") + f"): {why}")
    out += [
        "",
        "## Anchor vs release per anchor family and math type",
        "",
        table(report, records, ("family", "math_type"), rejected),
        "",
        "## Anchor vs release per anchor family and domain",
        "",
        table(report, records, ("family", "domain"), rejected),
    ]
    return "\n".join(out)
