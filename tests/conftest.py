"""Shared test fixtures."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from casekit import yamlio
from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.evaluate.store import open_store
from tests.helpers import build_source

REPO = Path(__file__).resolve().parent.parent


@cache
def _unusable(name: str) -> str:
    from casekit.envs import ENVIRONMENTS

    if name not in ENVIRONMENTS:
        return ""
    status = ENVIRONMENTS.get(name).check()
    return "" if status.usable else status.reason


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that needs a track whose environment is not installed here is skipped with the
    reason (a broken environment fails its own tests)."""
    from casekit.tracks import TRACKS

    names = TRACKS.names()
    for item in items:
        for name in names:
            if name in item.keywords:
                why = _unusable(name)
                if why:
                    item.add_marker(pytest.mark.skip(reason=f"the {name} environment is not installed here: {why} "
                                                            f"(casekit env install {name})"))


def pytest_configure(config: pytest.Config) -> None:
    """A marker per registered track: tests that need its environment (``-m dolfinx``).  Under
    pytest-xdist, the workers share the machine's cores for staging runs, as an executor's do."""
    import os

    from casekit.tracks import TRACKS

    os.environ.setdefault("CASEKIT_SHARED_BY", os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))

    for name in TRACKS.names():
        config.addinivalue_line("markers", f"{name}: needs the {name} track environment")


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def shared_data() -> Path:
    """The public PDEAgent-Bench v2 records (CC BY 4.0), as the repository carries them."""
    return REPO / "datasets" / "pdeagent-bench-repaired" / "input" / "pdeagent-bench-v2.jsonl"


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("built")
    paths = []
    for family, domain, seed in (("poisson", "unit_square", 3), ("heat", "annulus", 4)):
        # heat over the long horizon: over the short one, the final field of a coarse case came
        # within the span margin (5 x tau_acc) of the initial data's span
        src = build_source(family, domain, {"bc": "dirichlet"} if family == "poisson" else {"horizon": "long"}, seed)
        src["eval_grid"] = {"nx": 25, "ny": 25}
        src["calibration"] = {**src["calibration"], "cells_across": 20}
        # the case timeout is the agents' contract, not what these tests gate on (F-Time, caches,
        # limits): at 20 s, runs of a few seconds on a free machine timed out on a loaded 2-core one
        src["evaluation"]["timeout_sec"] = 90.0
        path = root / "cases" / family / f"{src['id']}.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(yamlio.dumps(src))
        paths.append(path)
    outcomes = build(paths, BuildOptions(root / "build", "dolfinx", repeats=1,
                                         limits=BuildOptions.solve_limits(300, 4096)))
    assert all(o.status == "built" for o in outcomes), [o.reason for o in outcomes]
    return root


@pytest.fixture(scope="session")
def store(built: Path):  # type: ignore[no-untyped-def]
    return open_store(built / "build", "dolfinx")
