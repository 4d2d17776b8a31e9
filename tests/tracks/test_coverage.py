"""What a track declares it covers is what its solvers can do: every declared family has a
registered solver, and every declared convergence row exists in the shared matrix."""

from __future__ import annotations

import pytest

from casekit.families import FAMILIES
from casekit.tracks import TRACKS

from .matrix import MATRIX


@pytest.mark.parametrize("track", [pytest.param(n, marks=getattr(pytest.mark, n)) for n in TRACKS.names()])
def test_declared_coverage_matches_the_solvers(track: str) -> None:
    t = TRACKS.get(track)
    assert set(t.families) <= set(FAMILIES.names()), set(t.families) - set(FAMILIES.names())
    missing = sorted(set(t.families) - set(t.solver_families()))
    assert not missing, f"{track} declares families without a solver: {missing}"
    assert set(t.convergence_rows) <= {r.id for r in MATRIX}
    assert t.submission_files and t.title and (t.resource(t.guide).is_file())
    if t.scaffold:
        assert t.resource(t.scaffold).is_file()
