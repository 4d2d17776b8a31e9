"""The evaluation grid's documented maximum size (casekit.grid.MAX_POINTS, issue 27): refused with
one problem naming the case and /eval_grid, before any point is made."""

from __future__ import annotations

import copy
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.grid import MAX_POINTS, too_many_points
from casekit.validate import check_record, check_source
from tests.helpers import poisson


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 2000), st.integers(2, 2000), st.none() | st.integers(2, 500))
def test_a_grid_is_refused_exactly_when_it_has_more_points_than_the_maximum(nx: int, ny: int, nz: int | None) -> None:
    refused = too_many_points(nx, ny, nz)
    assert (refused is None) == (nx * ny * (nz or 1) <= MAX_POINTS)
    if refused:
        assert f"{nx * ny * (nz or 1)} points" in refused and str(MAX_POINTS) in refused


def test_the_realistic_grids_fit() -> None:
    assert too_many_points(512, 512) is None and too_many_points(64, 64, 64) is None
    assert too_many_points(2000, 100) is None  # a long channel
    assert too_many_points(513, 512) and too_many_points(65, 64, 64)


def test_a_source_with_a_2000_by_2000_grid_is_one_problem_found_at_once() -> None:
    """It validated as clean in 62 s and 4 GB."""
    t0 = time.process_time()
    problems = check_source(poisson(eval_grid={"nx": 2000, "ny": 2000}))
    assert time.process_time() - t0 < 10
    assert [(p.check, p.pointer, p.case_id) for p in problems] == [("grid", "/eval_grid", "poisson_test")]
    assert "4000000 points (2000 x 2000)" in problems[0].message and "512 x 512" in (problems[0].valid or "")


def test_a_record_with_a_grid_too_large_is_refused_before_its_points_are_made() -> None:
    from tests.core.test_model import RECORD

    record = copy.deepcopy(RECORD)
    record["case_spec"]["eval_grid"].update(nx=2000, ny=2000)
    t0 = time.process_time()
    problems = check_record(record)
    assert time.process_time() - t0 < 10
    assert any(p.check == "grid" and p.pointer == "/case_spec/eval_grid" and "4000000 points" in p.message
               for p in problems)
