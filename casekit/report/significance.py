"""Significance tests the reports use, in pure Python (scipy is no dependency of casekit).

* :func:`two_proportions`: is one pass rate above another beyond chance?  Fisher's exact test
  when an expected count of the 2 x 2 table is below 5, else the pooled two-proportion z-test;
  one-sided (the first above the second) and two-sided p-values.
* :func:`mann_whitney`: do two samples (e_base, t_base) come from one distribution?  The
  Mann-Whitney U test, exact without ties when a sample has at most 8 values, else the normal approximation with
  the tie and continuity corrections (as ``scipy.stats.mannwhitneyu``'s ``method="auto"``).

The Wilson interval of a single rate is :func:`casekit.report.aggregate.wilson`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

#: an expected cell count below this makes :func:`two_proportions` use Fisher's exact test
FISHER_BELOW = 5.0
#: two samples without ties, one of them at most this large, get the exact U distribution
EXACT_UP_TO = 8


@dataclass(frozen=True)
class Test:
    """A test's statistic, its one-sided p-value (the alternative: the first sample is *greater*)
    and its two-sided p-value, and the method used."""

    statistic: float
    p_greater: float
    p_two_sided: float
    method: str

    def to_dict(self) -> dict[str, float | str | None]:
        """As JSON: a statistic that is not finite (an odds ratio of a table with a zero) is None."""
        return {"statistic": self.statistic if math.isfinite(self.statistic) else None,
                "p_greater": self.p_greater, "p_two_sided": self.p_two_sided,
                "method": self.method}


def _norm_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def two_proportions(k1: int, n1: int, k2: int, n2: int) -> Test:
    """k1 of n1 against k2 of n2 (both n at least 1)."""
    if n1 < 1 or n2 < 1 or not (0 <= k1 <= n1) or not (0 <= k2 <= n2):
        raise ValueError(f"two proportions need 0 <= k <= n and n >= 1, not {k1}/{n1} and {k2}/{n2}")
    n, k = n1 + n2, k1 + k2
    expected = min(n1 * k / n, n1 * (n - k) / n, n2 * k / n, n2 * (n - k) / n)
    if expected < FISHER_BELOW:
        return fisher_exact(k1, n1, k2, n2)
    p = k / n
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    z = (k1 / n1 - k2 / n2) / se if se > 0 else 0.0
    return Test(z, _norm_sf(z), min(1.0, 2 * _norm_sf(abs(z))), "z-test")


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> Test:
    """Fisher's exact test of the 2 x 2 table [[k1, n1 - k1], [k2, n2 - k2]]; the statistic is
    the sample odds ratio (inf when n1 - k1 or k2 is 0 and the other cells are not)."""
    n, k = n1 + n2, k1 + k2
    lo, hi = max(0, k - n2), min(k, n1)
    total = math.comb(n, k)
    prob = {x: math.comb(n1, x) * math.comb(n2, k - x) / total for x in range(lo, hi + 1)}
    greater = sum(p for x, p in prob.items() if x >= k1)
    here = prob[k1]
    two = sum(p for p in prob.values() if p <= here * (1 + 1e-7))
    a, b, c, d = k1, n1 - k1, k2, n2 - k2
    odds = (a * d / (b * c)) if b * c else (math.inf if a * d else math.nan)
    return Test(odds, min(1.0, greater), min(1.0, two), "Fisher exact")


def mann_whitney(x: Sequence[float], y: Sequence[float]) -> Test:
    """The Mann-Whitney U test of ``x`` against ``y`` (each at least one value); the statistic is
    U of ``x`` (the number of pairs with x above y, ties counted a half)."""
    n1, n2 = len(x), len(y)
    if n1 < 1 or n2 < 1:
        raise ValueError("the Mann-Whitney test needs at least one value in each sample")
    ranks, ties = _ranks([*x, *y])
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    if not ties and min(n1, n2) <= EXACT_UP_TO:
        counts = _u_counts(n1, n2)
        total = sum(counts)
        k = round(u1)
        greater = sum(counts[k:]) / total
        less = sum(counts[: k + 1]) / total
        return Test(u1, greater, min(1.0, 2 * min(greater, less)), "Mann-Whitney U (exact)")
    n = n1 + n2
    mu = n1 * n2 / 2
    var = n1 * n2 / 12 * ((n + 1) - sum(t ** 3 - t for t in ties) / (n * (n - 1)))
    if var <= 0:  # every value the same: no evidence either way
        return Test(u1, 1.0, 1.0, "Mann-Whitney U (normal)")
    sd = math.sqrt(var)
    greater = _norm_sf((u1 - mu - 0.5) / sd)
    two = min(1.0, 2 * _norm_sf((abs(u1 - mu) - 0.5) / sd))
    return Test(u1, greater, two, "Mann-Whitney U (normal)")


def _ranks(values: list[float]) -> tuple[list[float], list[int]]:
    """Mid-ranks (1-based) of ``values`` and the sizes of their groups of ties (2 or more)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for m in range(i, j + 1):
            ranks[order[m]] = (i + j) / 2 + 1
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


@cache
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many of the C(n1 + n2, n1) arrangements of n1 x's and n2 y's give each U = 0 .. n1 n2
    (the exact null distribution): the coefficients of the Gaussian binomial [n1 + n2 choose k]_q,
    k = min(n1, n2), built factor by factor as prod (1 - q^(n-k+i)) / (1 - q^i), each partial
    product a polynomial of degree at most n1 n2 (so truncating there is exact)."""
    n, k, deg = n1 + n2, min(n1, n2), n1 * n2
    poly = [1] + [0] * deg
    for i in range(1, k + 1):
        m = n - k + i
        for u in range(deg, m - 1, -1):  # times (1 - q^m)
            poly[u] -= poly[u - m]
        for u in range(i, deg + 1):  # over (1 - q^i)
            poly[u] += poly[u - i]
    return tuple(poly)
