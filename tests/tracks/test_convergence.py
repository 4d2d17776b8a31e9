"""Every track's calibration solvers converge at the theoretical rate (observed order within 0.3)
on the shared matrix (``matrix.py``) -- the rows each track supports, or those it declares."""

from __future__ import annotations

from pathlib import Path

import pytest

from casekit.tracks import TRACKS

from .matrix import MATRIX, Row
from .measure import assert_observed_order


def _params() -> list:  # type: ignore[type-arg]
    out = []
    for name, track in TRACKS.items():
        for row in MATRIX:
            if track.supports(row.family, row.domain) and (not track.convergence_rows or row.id in
                                                             track.convergence_rows):
                out.append(pytest.param(name, row, id=f"{name}-{row.id}", marks=getattr(pytest.mark, name)))
    return out


@pytest.mark.parametrize(("track", "row"), _params())
def test_observed_order(track: str, row: Row, tmp_path: Path) -> None:
    t = TRACKS.get(track)
    assert_observed_order(row.family, row.domain, row.levels, row.degree, row.cells, row.order,
                          lambda d, settings, n: t.solve_directly(d.case_spec(), settings, tmp_path / str(n)),
                          stabilization=track == "dolfinx")
