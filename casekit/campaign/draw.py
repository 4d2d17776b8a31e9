"""Drawing a campaign: how many cases each stratum of the release gets, and each case's source.

A *stratum* is a family x math type x domain template of the release's primary track.  A
campaign of ``n`` cases gives each stratum its share of ``n`` in proportion to its cases in the
release (largest remainders; a tie goes the way the secret orders it, so a small campaign covers
strata nobody can name in advance).  Within a stratum the release's cases take turns as
*anchors*, in the secret's order, and the ``k``-th turn of an anchor is its draw ``k``.

A campaign case is a **sibling** of its anchor (:mod:`casekit.authoring.sibling`, the mechanism
that replaced the PDEAgent-Bench records whose answer could be read off): the anchor's problem --
family, domain and its parameters, PDE parameters, boundary kinds per part, time window, grid,
output, solve settings -- with a new manufactured solution of the anchor's character, seeded by
the campaign's secret (:mod:`casekit.campaign.secret`).  Keeping everything but the solution is
what makes a campaign's pass rates comparable with the release's: a difference is the solver's,
not a harder draw.  Authored and imported anchors are drawn alike.  Every draw is validated with
every rule a release case passes (:func:`casekit.authoring.sibling.clean_sibling`: schema,
residual, boundary data, leaks, the inversion battery, the span margin); a draw that fails them
is never written, and the anchor's next draw takes its place.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from casekit.campaign.secret import Keys

#: the longest descriptive id (``defs.schema.json#/$defs/identifier``)
MAX_ID = 120


@dataclass(frozen=True, order=True)
class Stratum:
    family: str
    math_type: str  # the record's math types joined with "+", sorted
    domain: str

    @property
    def label(self) -> str:
        return f"{self.family} / {self.math_type or '-'} / {self.domain}"

    def to_dict(self) -> dict[str, str]:
        return {"family": self.family, "math_type": self.math_type, "domain": self.domain}


def stratum_of(record: Mapping[str, Any]) -> Stratum:
    c = record["pde_classification"]
    return Stratum(c["equation_family"], "+".join(sorted(c.get("math_type") or [])),
                   record["case_spec"]["domain"]["type"])


def distribution(records: Iterable[Mapping[str, Any]]) -> dict[Stratum, int]:
    return dict(sorted(Counter(stratum_of(r) for r in records).items()))


def allocate(counts: Mapping[Stratum, int], n: int, keys: Keys) -> dict[Stratum, int]:
    """Each stratum's share of ``n`` cases, in proportion to ``counts`` (largest remainders; ties
    in the secret's order).  Strata that get none are left out."""
    total = sum(counts.values())
    if n < 1 or total < 1:
        return {}
    quota = {s: n * c / total for s, c in counts.items()}
    out = {s: math.floor(q) for s, q in quota.items()}
    rest = n - sum(out.values())
    for s in sorted(quota, key=lambda s: (-(quota[s] - out[s]), keys.rank("stratum", s.label)))[:rest]:
        out[s] += 1
    return {s: k for s, k in sorted(out.items()) if k}


def turns(anchors: Iterable[str], keys: Keys) -> Iterator[tuple[str, int]]:
    """(anchor, draw) in turn: the anchors in the secret's order, each's draws 0, 1, 2, ..."""
    order = sorted(anchors, key=lambda a: keys.rank("anchor", a))
    k = 0
    while True:
        for a in order:
            yield a, k
        k += 1


def case_id(anchor: str, k: int) -> str:
    """A campaign case's descriptive id: its anchor's, with the draw (never its seed)."""
    suffix = f"_fresh{k}"
    return anchor[: MAX_ID - len(suffix)] + suffix


@dataclass
class Drawn:
    """A campaign case drawn from its anchor (``source`` None: no draw of it passed validation)."""

    anchor: str
    draw: int
    stratum: Stratum
    source: dict[str, Any] | None
    attempt: int
    failures: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return case_id(self.anchor, self.draw)


def draw_case(anchor_source: Mapping[str, Any], anchor: str, k: int, stratum: Stratum, keys: Keys,
              follows: str) -> Drawn:
    """Draw ``k`` of ``anchor``: the first of its sibling recipes that validates clean, as a
    campaign case source (its own id and public id keyed by the secret, provenance naming the
    anchor; ``follows`` names the release in its notes)."""
    from casekit.authoring.sibling import clean_sibling
    from casekit.ids import public_id

    cid = case_id(anchor, k)
    src = copy.deepcopy(dict(anchor_source))
    src["id"] = cid
    src["public_id"] = public_id(cid, keys.ids)
    src["provenance"] = {"anchor": anchor, "status": "replaced",
                         "why": f"a fresh draw of a private campaign following {follows}"}
    notes = (f"private campaign case: the problem of {follows}'s case {anchor!r} with a new manufactured solution "
             f"(campaign draw {k}, recipe {{attempt}})")
    source, attempt, failures = clean_sibling(src, f"{anchor}/{k}", notes=notes, key=keys.draws)
    return Drawn(anchor, k, stratum, source, attempt, failures)


@dataclass
class StratumDraw:
    """One stratum's part of a campaign: ``need`` more cases, from its ``anchors`` (id -> source),
    starting at turn ``start`` (the turns before were drawn in earlier rounds)."""

    stratum: Stratum
    need: int
    anchors: dict[str, dict[str, Any]]
    start: int = 0
    #: turns a stratum may take per case it needs before it gives up
    tries_per_case: int = 3


def draw_stratum(job: StratumDraw, keys: Keys, follows: str) -> tuple[list[Drawn], int]:
    """The stratum's next ``need`` valid draws in turn order (every failed turn is kept, with its
    reasons), and the next turn.  Runs on a worker: no output but the return value."""
    import itertools

    out: list[Drawn] = []
    got, t = 0, job.start
    limit = job.start + job.tries_per_case * job.need
    for anchor, k in itertools.islice(turns(job.anchors, keys), job.start, None):
        if got >= job.need or t >= limit:
            break
        d = draw_case(job.anchors[anchor], anchor, k, job.stratum, keys, follows)
        out.append(d)
        got += d.source is not None
        t += 1
    return out, t


def draw_all(jobs: list[StratumDraw], keys: Keys, follows: str, workers: int = 1,
             done: Callable[[Drawn], None] = lambda d: None) -> dict[Stratum, tuple[list[Drawn], int]]:
    """Every stratum's draws (:func:`draw_stratum`), ``workers`` strata at a time in processes."""
    if workers <= 1 or len(jobs) <= 1:
        out = {}
        for job in jobs:
            out[job.stratum] = draw_stratum(job, keys, follows)
            for d in out[job.stratum][0]:
                done(d)
        return out
    from concurrent.futures import ProcessPoolExecutor, as_completed

    results: dict[Stratum, tuple[list[Drawn], int]] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(draw_stratum, job, keys, follows): job.stratum for job in jobs}
        for f in as_completed(futures):
            results[futures[f]] = f.result()
            for d in results[futures[f]][0]:
                done(d)
    return dict(sorted(results.items()))
