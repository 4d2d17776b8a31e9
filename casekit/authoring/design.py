"""Sampling the design matrix: seeded design points that cover every level of every axis.

The domain template is one more axis (its levels: the templates the family supports).  Points
are drawn greedily: among random candidates the next point uses the least-used levels and covers
the most level pairs not yet covered, so small samples already cover each level and many pairs.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from casekit.domains import DOMAINS
from casekit.families import Family

DOMAIN_AXIS = "domain"


@dataclass(frozen=True)
class DesignPoint:
    domain: str
    levels: tuple[tuple[str, str], ...]

    def as_dict(self) -> dict[str, str]:
        return dict(self.levels)


def family_domains(family: Family) -> list[str]:
    return [name for name, t in DOMAINS.items() if t.dim in family.dims]


def axes_of(family: Family, domains: list[str] | None = None) -> dict[str, list[str]]:
    out = {DOMAIN_AXIS: domains or family_domains(family)}
    out.update({a.name: list(a.levels) for a in family.axes})
    return out


def sample(family: Family, n: int, seed: int, *, fixed: dict[str, str] | None = None,
           domains: list[str] | None = None,
           feasible: Callable[[DesignPoint], bool] = lambda p: True,
           candidates: int = 64) -> list[DesignPoint]:
    """``n`` design points; ``fixed`` pins axes to a level, ``feasible`` rejects combinations
    that cannot be built (e.g. mixed conditions on a one-part boundary)."""
    axes = axes_of(family, domains)
    fixed = fixed or {}
    for k, v in fixed.items():
        axes[k] = [v]
    rng = np.random.default_rng(seed)
    used: Counter[tuple[str, str]] = Counter()
    pairs: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    points: list[DesignPoint] = []
    seen: set[DesignPoint] = set()
    names = list(axes)
    for _ in range(n):
        best, best_score = None, None
        for _ in range(candidates):
            choice = {a: _draw(axes[a], used, a, rng) for a in names}
            point = _point(choice)
            if point in seen or not feasible(point):
                continue
            items = list(choice.items())
            new_pairs = sum(1 for pr in itertools.combinations(items, 2) if pr not in pairs)
            unseen = sum(1 for i in items if used[i] == 0)
            score = (unseen, -sum(used[i] for i in items), new_pairs)
            if best_score is None or score > best_score:
                best, best_score = point, score
        if best is None:
            break  # the design space is exhausted
        points.append(best)
        seen.add(best)
        items = [(DOMAIN_AXIS, best.domain), *best.levels]
        used.update(items)
        pairs.update(itertools.combinations(items, 2))
    return points


def _draw(levels: list[str], used: Counter, axis: str, rng: np.random.Generator) -> str:
    """A level, preferring (half of the time) one never drawn yet."""
    fresh = [lv for lv in levels if used[(axis, lv)] == 0]
    pool = fresh if fresh and rng.random() < 0.5 else levels
    return pool[int(rng.integers(len(pool)))]


def _point(choice: dict[str, str]) -> DesignPoint:
    return DesignPoint(choice[DOMAIN_AXIS], tuple((k, v) for k, v in choice.items() if k != DOMAIN_AXIS))


@dataclass(frozen=True)
class Coverage:
    per_level: dict[str, dict[str, int]]
    pairs_covered: int
    pairs_total: int

    @property
    def levels_missing(self) -> list[str]:
        return [f"{a}={lv}" for a, counts in self.per_level.items() for lv, c in counts.items() if c == 0]


def coverage(family: Family, points: list[DesignPoint], domains: list[str] | None = None,
             fixed: dict[str, str] | None = None) -> Coverage:
    axes = axes_of(family, domains)
    for k, v in (fixed or {}).items():
        axes[k] = [v]
    per = {a: dict.fromkeys(levels, 0) for a, levels in axes.items()}
    covered: set[tuple[tuple[str, str], ...]] = set()
    for p in points:
        items = [(DOMAIN_AXIS, p.domain), *p.levels]
        for a, lv in items:
            per[a][lv] += 1
        covered.update(itertools.combinations(items, 2))
    total = sum(len(axes[a]) * len(axes[b]) for a, b in itertools.combinations(list(axes), 2))
    return Coverage(per, len(covered), total)
