"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def shared_data() -> Path:
    path = SHARED / "data" / "pdeagent-bench-v2.jsonl"
    if not path.exists():
        pytest.skip(f"the shared PDEAgent-Bench data is not at {path}")
    return path
