"""A track's code hash (part of every build key) covers what its calibration and reference solves
run, and nothing they do not: a change to the inversion battery, which no solve runs, must not stale
every committed record (adding eigen_terms did, on every track), while a change to shared solver
code must.  Probed on a copy of the shared solver code, never in the package (a parallel test
would see the probe)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from casekit.solvers import bundle
from casekit.tracks import TRACKS
from casekit.tracks import base as track_base


def _hashes() -> dict[str, str]:
    return {name: TRACKS.get(name).code_hash() for name in TRACKS.names()}


def test_the_inversion_battery_is_outside_every_code_hash_and_shared_solver_code_inside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "solvers"
    shutil.copytree(track_base.SHARED_SOLVERS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(track_base, "SHARED_SOLVERS", copy)
    before = _hashes()
    probe = "# a probe of the code hash's scope\n"
    (copy / "baselines" / "inverters" / "zz_probe.py").write_text(probe)
    real = bundle.runtime_files
    monkeypatch.setattr(bundle, "runtime_files",
                        lambda: [*real(), ("casekit/solvers/baselines/inverters/zz_probe.py", probe.encode())])
    assert _hashes() == before  # the battery, in the directory and in the runtime bundle alike
    (copy / "zz_probe.py").write_text(probe)
    after = _hashes()
    assert all(after[name] != before[name] for name in before)
