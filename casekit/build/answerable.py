"""Cases a dataset build found answerable without solving, for the dataset to replace.

A case without a manufactured solution cannot be checked for leaks before a build solves it: its
numerical reference may turn out to be a multiple of its forcing (an eigenfunction on a periodic
square, heat_oscillatory_source_no_exact) or be read by an inverter.  The build rejects such a
case with a reason that begins with one of :data:`casekit.build.pipeline.ANSWERABLE` (after
refining its calibration as far as the rules allow).  This module lists those rejections of the
committed build area by anchor record, in the form ``casekit import --replace FILE`` reads, so
that the next import releases a sibling in their place.

Only an entry of the source as it is now and of the current acceptance rules counts (a rejection
of earlier rules is built again first), and only a case without a manufactured solution: a drawn
solution that leaks is the sibling's draw to redo, not the record's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from casekit.build.pipeline import ANSWERABLE, REJECTION_RULES
from casekit.build.shards import Area, Source


def answerable(area: Area, sources: Iterable[Source], tracks: Iterable[str]) -> dict[str, str]:
    """{anchor record id: the build's reason (and track)} of every numerical-reference case that a
    committed entry of ``tracks`` rejects as answerable without solving under the current rules."""
    out: dict[str, str] = {}
    tracks = list(tracks)
    for s in sources:
        if s.data.get("manufactured_solution"):
            continue
        for track in tracks:
            entry = area.read(track, s)
            if entry is None or entry.get("source_key") != s.source_key or not is_answerable(entry):
                continue
            anchor = (s.data.get("provenance") or {}).get("anchor") or s.id
            out.setdefault(anchor, f"{entry['reason']} ({track} build)")
    return dict(sorted(out.items()))


def is_answerable(entry: dict[str, Any]) -> bool:
    """A committed rejection, under the current rules, that says the case needs no solve."""
    return (entry.get("status") == "rejected" and entry.get("rules", 1) == REJECTION_RULES
            and str(entry.get("reason", "")).startswith(ANSWERABLE))


def merge_into(path: Path, found: dict[str, str]) -> dict[str, str]:
    """``path`` (a ``--replace`` file, created if missing) with ``found`` added: what it lists
    stays (a record replaced once stays replaced: its sibling is in the release)."""
    from casekit.errors import UsageError
    from casekit.jsonio import read_json, write_json

    listed: dict[str, str] = {}
    if path.exists():
        data = read_json(path)
        if not isinstance(data, dict):
            raise UsageError(f"{path} is not a replace file (a JSON object of record ids to reasons)")
        listed = dict(data)
    merged = dict(sorted({**found, **listed}.items()))
    write_json(path, merged)
    return merged
