"""Every track's calibration solvers converge at the theoretical rate (observed order within 0.3)
on the shared matrix (``matrix.py``) -- the rows each track supports, or those it declares."""

from __future__ import annotations

from pathlib import Path

import pytest

from casekit.tracks import TRACKS

from .matrix import MATRIX, Row
from .measure import assert_observed_order

#: (track, row id) -> why a row is a known defect (a strict xfail).  Empty: the numpy track's first
#: order on poisson-periodic_square-robin did not show on the bubble draw (it XPASSed)
KNOWN: dict[tuple[str, str], str] = {}


def _params() -> list:  # type: ignore[type-arg]
    from casekit.families import FAMILIES

    out = []
    for name, track in TRACKS.items():
        for row in MATRIX:
            below = row.degree < FAMILIES.get(row.family).min_degree  # a scheme of its own: named rows only
            if track.supports(row.family, row.domain) and (row.id in track.convergence_rows or not (
                    track.convergence_rows or below)):
                marks = [getattr(pytest.mark, name)]
                if (name, row.id) in KNOWN:
                    marks.append(pytest.mark.xfail(reason=KNOWN[(name, row.id)], strict=True))
                out.append(pytest.param(name, row, id=f"{name}-{row.id}", marks=marks))
    return out


@pytest.mark.parametrize(("track", "row"), _params())
def test_observed_order(track: str, row: Row, tmp_path: Path) -> None:
    t = TRACKS.get(track)
    assert_observed_order(row.family, row.domain, row.levels, row.degree, row.cells, row.order,
                          lambda d, settings, n: t.solve_directly(d.case_spec(), settings, tmp_path / str(n)),
                          stabilization=track == "dolfinx")
