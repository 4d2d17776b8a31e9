"""The stratified sample of a dataset's cases that a sample track is released on (README: Datasets).

A track whose solves cost too much to build every case (:data:`SAMPLE_TRACKS`) is built and
released on a sample that still covers what the track supports: one case of every **stratum**
-- family, math type(s), domain template -- among the sources that list the track and that it
supports, the cheapest by :func:`cost` (ties by id), topped up to :data:`SAMPLE_MIN` cases in
rounds over the strata (each round takes every stratum's next cheapest case, cheapest first).
Equivalently: every case ordered by (its rank in its stratum, cost, id), and the sample the first
max(strata, min(SAMPLE_MIN, cases)) of that order.

The sample depends on the sources alone -- never on committed entries or timings -- so it does
not move while a track is built, is the same on every machine, and a source added changes it
locally: the new source enters or not, and at most one other case leaves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from casekit.solvers.settings import SolveSettings

if TYPE_CHECKING:
    from casekit.build.shards import Source

#: the fewest cases a sample holds (every case, when the track supports fewer)
SAMPLE_MIN = 50
#: the sample tracks: a dataset is built and released on them for its sample only (their solves
#: cost too much for every case); the other tracks build every case.  A release decision, kept
#: here rather than in the track's package, whose files are part of its solver code hash: changing
#: it must not make the track's committed records stale
SAMPLE_TRACKS = frozenset({"dealii", "firedrake"})

Stratum = tuple[str, tuple[str, ...], str]


def sampled(track: str) -> bool:
    """Whether a dataset is built and released on ``track`` for its sample only."""
    return track in SAMPLE_TRACKS


_DEFAULT = SolveSettings()


def template(source: Source) -> str:
    domain = source.data.get("domain")
    return str(domain.get("template", "")) if isinstance(domain, dict) else ""


def _time(source: Source) -> dict[str, Any] | None:
    pde = source.data.get("pde")
    time = pde.get("time") if isinstance(pde, dict) else None
    return time if isinstance(time, dict) and time else None


def stratum(source: Source) -> Stratum:
    """(family, math types, domain template) of a source whose family is registered: the math
    types as the build records them (``pde_classification.math_type``: steady or transient)."""
    from casekit.families import FAMILIES

    transient = _time(source) is not None
    return source.family, tuple(FAMILIES.get(source.family).math_types(transient=transient)), template(source)


def cost(source: Source) -> float:
    """What building ``source`` costs, from the source alone: over its solves -- the calibration,
    and for a case without a manufactured solution each numerical reference level --
    cells_across**dim * degree**dim * time steps.  A source whose numbers cannot be read costs
    ``inf`` (its build rejects it; any readable one of its stratum comes first)."""
    from casekit.domains.template import DOMAINS

    data = source.data
    name = template(source)
    dim = DOMAINS.get(name).dim if name in DOMAINS else 2
    time = _time(source)
    solves = [data.get("calibration") or {}]
    reference = data.get("reference")
    if not data.get("manufactured_solution") and isinstance(reference, dict):
        solves += list(reference.get("levels") or [])
    try:
        return sum(_work(s, dim, time) for s in solves)
    except (TypeError, ValueError, AttributeError, ArithmeticError):
        return math.inf


def _work(settings: Mapping[str, Any], dim: int, time: Mapping[str, Any] | None) -> float:
    cells = float(settings.get("cells_across", _DEFAULT.cells_across))
    degree = float(settings.get("degree", _DEFAULT.degree))
    steps = 1.0
    if time is not None:
        dt = float(settings.get("dt") or time.get("dt") or 0.0)
        span = float(time.get("t_end", 0.0)) - float(time.get("t0", 0.0))
        steps = max(1.0, round(span / dt)) if dt > 0 else math.inf
    return cells**dim * degree**dim * steps


def strata(sources: Iterable[Source], track: str,
           supports: Callable[[str, str], bool] | None = None) -> dict[Stratum, list[Source]]:
    """The sources that list ``track`` and that it supports (``supports(family, template)``,
    default the registered track's), by stratum, each cheapest first (ties by id)."""
    if supports is None:
        from casekit.tracks import TRACKS

        supports = TRACKS.get(track).supports
    out: dict[Stratum, list[Source]] = {}
    for s in sources:
        if track in s.tracks and supports(s.family, template(s)):
            out.setdefault(stratum(s), []).append(s)
    return {k: sorted(v, key=lambda s: (cost(s), s.id)) for k, v in sorted(out.items())}


def select(sources: Iterable[Source], track: str, supports: Callable[[str, str], bool] | None = None,
           minimum: int = SAMPLE_MIN) -> list[Source]:
    """The sample of ``sources`` on ``track``, sorted by id (see the module)."""
    groups = strata(sources, track, supports)
    ranked = [(rank, cost(s), s.id, s) for group in groups.values() for rank, s in enumerate(group)]
    order = sorted(ranked, key=lambda r: r[:3])
    size = max(len(groups), min(minimum, len(order)))
    return sorted((r[3] for r in order[:size]), key=lambda s: s.id)
