"""What casekit's deal.II program needs to compute a case's target values (``targets.cc``).

Each case_spec target becomes one settings.json entry, written by the function registered for
its kind (one per kind, never per family): every entry has the name, the kind and the output
component it is about (-1: the output field itself -- the unknown, or the magnitude of a vector
unknown); a boundary flux adds the boundary id of its part and its coefficient as muParser text,
a point value its point.  A maximum needs the evaluation grid's points inside the exact domain
(the program has no exact geometry): ``grid_inside``, one '0' or '1' per grid point in the
arrays' order, from the domain registry.  The kinds registered here are those the program's
registry computes (``targets.cc``); the track declares them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from casekit.domains.msh22 import boundary_ids
from casekit.errors import CasekitError
from casekit.registry import Registry

#: kind -> (case_spec entry, case_spec) -> what the entry adds to the common fields
Entry = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
ENTRIES: Registry[Entry] = Registry("deal.II target kind")


def entry(kind: str) -> Callable[[Entry], Entry]:
    def deco(fn: Entry) -> Entry:
        return ENTRIES.register(kind, fn)

    return deco


@entry("mean")
def _mean(e: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, Any]:
    return {}


@entry("max")
def _max(e: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, Any]:
    return {}


@entry("point")
def _point(e: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, Any]:
    return {"at": [float(c) for c in e["at"]]}


@entry("boundary_flux")
def _boundary_flux(e: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, Any]:
    from casekit.tracks.dealii.solvers import mu

    ids = boundary_ids(case_spec)
    if e["boundary"] not in ids:
        raise CasekitError(f"target {e['name']!r}: the domain has no boundary part {e['boundary']!r}",
                           pointer="/targets", valid=", ".join(ids))
    return {"boundary": ids[e["boundary"]], "coefficient": mu(e["coefficient"])}


def _component(e: dict[str, Any], case_spec: dict[str, Any]) -> int:
    comps = case_spec["output"].get("components")
    return comps.index(e["of"]) if comps and e.get("of") in comps else -1


def settings(case_spec: dict[str, Any]) -> dict[str, Any]:
    """The settings.json fields of the case's targets (none without targets)."""
    targets = case_spec.get("targets") or []
    if not targets:
        return {}
    from casekit.solvers.artifacts import OutputGrid

    inside = OutputGrid(case_spec).inside
    return {"targets": [{"name": e["name"], "kind": e["kind"], "component": _component(e, case_spec),
                         **ENTRIES.get(e["kind"])(e, case_spec)} for e in targets],
            "grid_inside": "".join("1" if v else "0" for v in inside)}
