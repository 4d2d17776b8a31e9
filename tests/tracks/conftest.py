"""Track tests need the track's library; they skip with the reason when it is missing."""

from __future__ import annotations

import importlib.util

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if importlib.util.find_spec("dolfinx") is None:
        skip = pytest.mark.skip(reason="DOLFINx is not installed (pip install -e '.[dolfinx]')")
        for item in items:
            if "dolfinx" in item.keywords:
                item.add_marker(skip)
