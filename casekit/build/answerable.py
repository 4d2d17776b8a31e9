"""Cases a dataset build found answerable without solving, for the dataset to replace.

A case without a manufactured solution cannot be checked for leaks before a build solves it: its
numerical reference may turn out to be a multiple of its forcing (an eigenfunction on a periodic
square, heat_oscillatory_source_no_exact) or be read by an inverter.  A drawn or kept manufactured
solution passes the validator's inverters, but only the build knows the case's threshold: a
reaction-dominated sibling whose answer is within 0.32 of its forcing's span is answerable when the
calibration's threshold is 0.15 (reaction_diffusion_cubic_manufactured).  The build rejects such a
case with a reason that begins with one of :data:`casekit.build.pipeline.ANSWERABLE` (after
refining its calibration as far as the rules allow).

This module lists those rejections of the committed build area by anchor record, in the replace
file's form (casekit.importers.replacements): a record released as it was (kept, repaired) is
listed itself, so that the next import releases a sibling in its place; a sibling is listed by
its draw, so that the next import skips that draw and releases the next clean one.  A sibling is
listed for any rejection that another draw may not have (:data:`casekit.build.pipeline.REDRAWN`):
answerable, and also a calibration too coarse for its drawn solution (reaction-diffusion siblings
whose time rates made backward Euler's error at the record's step 2-4 %) -- the import then skips
every draw as fast (casekit.authoring.sibling.clean_sibling).  A record without a manufactured
solution is listed too when the build cannot certify its numerical reference
(:func:`casekit.build.pipeline.uncertified`: a ladder whose gaps do not shrink, as on five Stokes
flows with re-entrant corners, or a calibration that stays far from it after the refinements the
rules allow) and no track read built it: its sibling's manufactured solution needs no ladder.

Only an entry of the source as it is now and of the current acceptance rules counts (a rejection
of earlier rules is built again first).  A *built* entry is audited for the rule that came after
many were built, the time-Taylor expansion from t0 (casekit.validate.taylor) within the span margin,
from its record alone: no solve needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from casekit.authoring.sibling import drawn
from casekit.build.pipeline import ANSWERABLE, NEAR_A_TAYLOR, REDRAWN, REJECTION_RULES, TAYLOR_GATED_RULES, uncertified
from casekit.build.shards import Area, Source
from casekit.errors import CasekitError
from casekit.importers.replacements import Replacements
from casekit.validate import taylor


def answerable(area: Area, sources: Iterable[Source], tracks: Iterable[str], jobs: int = 1) -> Replacements:
    """The records that a committed entry of ``tracks`` rejects as answerable without solving, and
    the sibling draws it rejects for a reason another draw may not have, under the current rules, by
    anchor record, with the build's reason (and track).  Built entries that need the time-Taylor
    audit (:func:`needs_audit`) are audited in ``jobs`` processes."""
    out = Replacements()
    tracks = list(tracks)
    found: list[tuple[Source, str, dict[str, Any]]] = []
    for s in sources:
        for track in tracks:
            entry = area.read(track, s)
            if entry is not None and entry.get("source_key") == s.source_key:
                found.append((s, track, entry))
    audited = iter(_audit([e for _, _, e in found if needs_audit(e)], jobs))
    built = {s.id for s, _, e in found if e.get("status") == "built"}  # a track certified its reference
    listed: set[str] = set()  # a source is listed by the first of its tracks that rejects it
    for s, track, entry in found:
        draw = drawn(s.data)
        if entry.get("status") == "built":
            reason = next(audited) if needs_audit(entry) else None
        else:
            listable = is_redrawn(entry) if draw is not None else (
                is_answerable(entry) or (s.id not in built and is_replaced(entry, s.data)))
            reason = entry["reason"] if listable else None
        if reason is None or s.id in listed:
            continue
        listed.add(s.id)
        anchor = (s.data.get("provenance") or {}).get("anchor") or s.id
        why = f"{reason} ({track} build)"
        if draw is not None:
            out.draws.setdefault(anchor, {}).setdefault(draw, why)
        else:
            out.records.setdefault(anchor, why)
    return out


def needs_audit(entry: dict[str, Any]) -> bool:
    """A built entry whose build came before its trial gated the time-Taylor expansion."""
    return entry.get("status") == "built" and entry.get("rules", 1) < TAYLOR_GATED_RULES


def _audit(entries: list[dict[str, Any]], jobs: int) -> list[str | None]:
    if jobs <= 1 or len(entries) < 2:
        return [near_taylor(e) for e in entries]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(near_taylor, entries, chunksize=4))


def near_taylor(entry: dict[str, Any]) -> str | None:
    """Why a committed *built* entry is answerable by the time-Taylor expansion from t0
    (casekit.validate.taylor: it passes the accuracy gate), or None: the rule came after entries
    were built, and checking a record needs no solve, so built entries are audited rather than
    built again."""
    record = entry.get("record") or {}
    try:
        orders = taylor.of_record(record)
    except CasekitError:
        return None
    tau = float(record["evaluation_metadata"]["thresholds"]["tau_acc"])
    found = taylor.passes(orders, tau)
    if found is None:
        return None
    n, e = found
    return (f"{NEAR_A_TAYLOR}{n} from t0 passes the accuracy gate (relative L2 {e:.3g}, tau_acc {tau:.3g}; "
            "an audit of the built record)")


def is_answerable(entry: dict[str, Any]) -> bool:
    """A committed rejection, under the current rules, that says the case needs no solve."""
    return _rejected(entry, ANSWERABLE)


def is_replaced(entry: dict[str, Any], source: dict[str, Any]) -> bool:
    """A committed rejection of a record (not a sibling) for which a sibling replaces it: answerable,
    or, for a record without a manufactured solution, a reference the build cannot certify
    (:func:`casekit.build.pipeline.uncertified`)."""
    return is_answerable(entry) or (not source.get("manufactured_solution") and _rejected(entry, ())
                                    and uncertified(str(entry.get("reason", ""))))


def is_redrawn(entry: dict[str, Any]) -> bool:
    """A committed rejection of a sibling, under the current rules, that another draw may not have."""
    return _rejected(entry, REDRAWN)


def _rejected(entry: dict[str, Any], reasons: tuple[str, ...]) -> bool:
    """A rejection under the current rules whose reason begins with one of ``reasons`` (any, when
    there are none)."""
    return (entry.get("status") == "rejected" and entry.get("rules", 1) == REJECTION_RULES
            and (not reasons or str(entry.get("reason", "")).startswith(reasons)))
