"""Every committed release reproduces: a stratified sample of its cases (every family, domain
template and math type), rebuilt from the committed sources, gives the released records."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit.cli import app

ROOT = Path(__file__).resolve().parents[2]
RELEASES = sorted(p.parent for p in (ROOT / "releases").glob("*/*/manifest.json"))

pytestmark = pytest.mark.dolfinx


@pytest.mark.parametrize("release", RELEASES, ids=[f"{p.parent.name}-{p.name}" for p in RELEASES])
def test_a_committed_release_reproduces_on_a_stratified_sample(release: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["reproduce", str(release), "--sources", str(ROOT / "cases"),
                                      "--sample", "stratified", "--build-dir", str(tmp_path / "build")])
    assert result.exit_code == 0, result.output
