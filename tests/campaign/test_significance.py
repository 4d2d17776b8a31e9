"""The report's significance tests agree with scipy's (where scipy is installed) and with values
worked by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.report.significance import fisher_exact, mann_whitney, two_proportions


def test_fisher_by_hand() -> None:
    # 3/3 against 0/4: the one table as extreme, C(3,3) C(4,0) / C(7,3) = 1/35
    t = fisher_exact(3, 3, 0, 4)
    assert t.p_greater == pytest.approx(1 / 35) and t.p_two_sided == pytest.approx(1 / 35)
    assert t.statistic == math.inf and t.to_dict()["statistic"] is None  # JSON has no inf
    assert fisher_exact(0, 3, 0, 4).to_dict()["statistic"] is None  # nor nan
    assert fisher_exact(0, 3, 3, 4).p_greater == pytest.approx(1.0)
    assert two_proportions(3, 3, 0, 4).method == "Fisher exact"  # expected counts below 5
    assert two_proportions(40, 50, 20, 50).method == "z-test"


def test_bad_counts_are_refused() -> None:
    for args in ((1, 0, 1, 2), (3, 2, 1, 2), (-1, 2, 1, 2)):
        with pytest.raises(ValueError):
            two_proportions(*args)
    with pytest.raises(ValueError):
        mann_whitney([], [1.0])


def test_mann_whitney_by_hand() -> None:
    # every x above every y: U = n1 n2, the one arrangement of C(6,3) = 20 as extreme
    t = mann_whitney([4, 5, 6], [1, 2, 3])
    assert t.statistic == 9 and t.p_greater == pytest.approx(1 / 20) and t.p_two_sided == pytest.approx(2 / 20)
    assert mann_whitney([1, 1], [1, 1]).p_two_sided == 1.0  # all tied: no evidence


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.data())
def test_two_proportions_match_scipy(n1: int, n2: int, data: st.DataObject) -> None:
    stats = pytest.importorskip("scipy.stats")
    k1, k2 = data.draw(st.integers(0, n1)), data.draw(st.integers(0, n2))
    t = two_proportions(k1, n1, k2, n2)
    if t.method == "Fisher exact":
        assert t.p_greater == pytest.approx(stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]],
                                                               alternative="greater").pvalue, rel=1e-6, abs=1e-12)
        assert t.p_two_sided == pytest.approx(stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue,
                                              rel=1e-6, abs=1e-12)
    else:
        assert t.p_greater == pytest.approx(stats.norm.sf(t.statistic), rel=1e-9, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=14), st.lists(st.integers(0, 12), min_size=1, max_size=14),
       st.booleans())
def test_mann_whitney_matches_scipy(x: list[int], y: list[int], spread: bool) -> None:
    stats = pytest.importorskip("scipy.stats")
    if spread:  # distinct values: the exact branch for small samples
        x = [v + 0.01 * i for i, v in enumerate(x)]
        y = [v + 0.001 * (i + 1) + 0.5 for i, v in enumerate(y)]
    t = mann_whitney(x, y)
    if len({*x, *y}) == 1:  # all tied: scipy answers nan, casekit "no evidence" (test_mann_whitney_by_hand)
        return
    assert t.statistic == pytest.approx(stats.mannwhitneyu(x, y).statistic)
    for alternative, p in (("greater", t.p_greater), ("two-sided", t.p_two_sided)):
        assert p == pytest.approx(stats.mannwhitneyu(x, y, alternative=alternative).pvalue, rel=1e-6, abs=1e-12)
