"""The release beside its anchor: how many of the anchor's records are released, and how
(kept as given, repaired, replaced by a sibling), per family x math type and family x domain.

The anchor's side comes from the import report (``casekit import --repair`` writes each record's
family, math type and domain as the anchor classifies it, and its provenance); the release's side
from the released records (``evaluation_metadata.provenance``), so a case the build rejected counts
as not released even though the import kept it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from casekit.errors import CasekitError

STATUSES = ("kept", "repaired", "replaced")


def released_status(records: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Released case id -> its provenance status (cases without one are authored: left out)."""
    out = {}
    for r in records:
        prov = r.get("evaluation_metadata", {}).get("provenance")
        if prov:
            out[r["id"]] = prov["status"]
    return out


def _rows(report: list[dict[str, Any]], released: dict[str, str], key: tuple[str, ...]
          ) -> list[tuple[tuple[str, ...], Counter[str]]]:
    counts: dict[tuple[str, ...], Counter[str]] = {}
    for entry in report:
        anchor = entry.get("anchor")
        if not anchor:
            raise CasekitError(f"import report entry {entry.get('original_id')!r} has no anchor classification",
                               valid="an import report written by `casekit import ... --repair` of this version")
        c = counts.setdefault(tuple(str(anchor.get(k, "?")) for k in key), Counter())
        c["anchor"] += 1
        status = released.get(entry.get("id") or "")
        c[status or "not released"] += 1
        if status:
            c["released"] += 1
    return sorted(counts.items())


def table(report: list[dict[str, Any]], records: Iterable[dict[str, Any]], key: tuple[str, ...]) -> str:
    """A markdown table of the anchor's records against the release's, grouped by ``key``
    (anchor fields: ``family``, ``math_type``, ``domain``), with a total row."""
    released = released_status(records)
    cols = ("anchor", "released", *STATUSES, "not released")
    rows = [f"| {' | '.join(k.replace('_', ' ') for k in key)} | {' | '.join(cols)} |",
            "|" + "---|" * (len(key) + len(cols))]
    total: Counter[str] = Counter()
    for group, c in _rows(report, released, key):
        total.update(c)
        rows.append(f"| {' | '.join(group)} | {' | '.join(str(c[col]) for col in cols)} |")
    rows.append(f"| **total** |{' |' * (len(key) - 1)} {' | '.join(f'**{total[col]}**' for col in cols)} |")
    return "\n".join(rows)


def section(report: list[dict[str, Any]], records: list[dict[str, Any]]) -> str:
    """The card's section: the two tables and what the statuses mean."""
    return "\n".join([
        "Every record of the anchor is released *kept* (as given), *repaired* (casekit re-derived its forcing, "
        "boundary and initial data from its manufactured solution, leak-free) or *replaced* (a sibling: the same "
        "family, domain, parameters, boundary layout, time window and grid with a new manufactured solution, drawn "
        "with a seed derived from the record's id, because the record's own solution can be read from what the "
        "agent sees), or it is counted as not released with its reason in `import-report.json`. Each case's "
        "record carries its provenance (`evaluation_metadata.provenance`: anchor id, status, why).",
        "",
        "### Anchor vs release per family and math type",
        "",
        table(report, records, ("family", "math_type")),
        "",
        "### Anchor vs release per family and domain",
        "",
        table(report, records, ("family", "domain")),
    ])
