"""A track's code hash (part of every build key) covers what its calibration and reference solves
run, and nothing they do not: a change to the inversion battery, which no solve runs, must not stale
every committed record (adding eigen_terms did, on every track), while a change to shared solver
code must."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import casekit.solvers as shared
import casekit.solvers.baselines.inverters as inverters
from casekit.tracks import TRACKS


@contextmanager
def _probe(directory: Path, name: str) -> Iterator[None]:
    path = directory / name
    path.write_text("# a probe of the code hash's scope; removed at once\n")
    try:
        yield
    finally:
        path.unlink()


def test_the_inversion_battery_is_outside_every_code_hash_and_shared_solver_code_inside() -> None:
    before = {name: TRACKS.get(name).code_hash() for name in TRACKS.names()}
    with _probe(Path(inverters.__file__).parent, "zz_code_hash_probe.py"):
        assert {name: TRACKS.get(name).code_hash() for name in TRACKS.names()} == before
    with _probe(Path(shared.__file__).parent, "zz_code_hash_probe.py"):
        after = {name: TRACKS.get(name).code_hash() for name in TRACKS.names()}
    assert all(after[name] != before[name] for name in before)
