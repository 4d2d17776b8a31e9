"""The stratified sample a sample track is built and released on (casekit.build.sample): every
stratum the track supports, at least SAMPLE_MIN cases (or every one), from the sources alone,
whatever their order, and a source added changes it locally."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.build import sample
from casekit.build.shards import Source
from casekit.errors import UnknownName

FAMILIES = ("poisson", "heat", "convection_diffusion", "stokes", "wave")
TEMPLATES = ("unit_square", "unit_cube", "circle", "l_shape")


def supports(family: str, template: str) -> bool:
    """A track that cannot mesh the L-shape (and has no Stokes solver)."""
    return template != "l_shape" and family != "stokes"


def source(i: int, family: str = "poisson", template: str = "unit_square", transient: bool = False,
           cells: int = 16, degree: int = 2, manufactured: bool = True,
           tracks: tuple[str, ...] = ("dealii", "dolfinx")) -> Source:
    data: dict[str, Any] = {
        "id": f"{family}_{i:03d}", "family": family, "domain": {"template": template},
        "pde": {"params": {}, **({"time": {"t0": 0.0, "t_end": 1.0, "dt": 0.1}} if transient else {})},
        "calibration": {"cells_across": cells, "degree": degree, **({"dt": 0.05} if transient else {})},
        "tracks": list(tracks)}
    if manufactured:
        data["manufactured_solution"] = {"u": "x*y"}
    else:
        data["reference"] = {"levels": [{"cells_across": 2 * cells, "degree": degree}]}
    return Source(Path(f"{data['id']}.yaml"), data, f"{data['id']}.yaml")


case = st.builds(lambda *a: a, st.sampled_from(FAMILIES), st.sampled_from(TEMPLATES), st.booleans(),
                 st.integers(4, 64), st.integers(1, 3), st.booleans(),
                 st.sampled_from([("dealii",), ("dolfinx",), ("dealii", "dolfinx")]))
cases = st.lists(case, max_size=40).map(lambda draws: [source(i, *d) for i, d in enumerate(draws)])


def ids(sources: list[Source]) -> list[str]:
    return [s.id for s in sources]


@settings(max_examples=150, deadline=None)
@given(cases, st.integers(0, 30))
def test_the_sample_covers_every_supported_stratum_topped_up_round_robin(sources: list[Source], minimum: int) -> None:
    chosen = sample.select(sources, "dealii", supports, minimum)
    eligible = [s for s in sources if "dealii" in s.tracks and supports(s.family, sample.template(s))]
    groups = sample.strata(sources, "dealii", supports)
    assert {sample.stratum(s) for s in chosen} == {sample.stratum(s) for s in eligible} == set(groups)
    assert len(chosen) == max(len(groups), min(minimum, len(eligible)))
    assert set(ids(chosen)) <= set(ids(eligible)) and ids(chosen) == sorted(ids(chosen))
    # in each stratum its cheapest cases; the strata not exhausted are topped up evenly (rounds)
    taken = {k: [s for s in group if s in chosen] for k, group in groups.items()}
    assert all(taken[k] == group[:len(taken[k])] for k, group in groups.items())
    open_counts = [len(taken[k]) for k, group in groups.items() if len(taken[k]) < len(group)]
    assert not open_counts or max(len(t) for t in taken.values() if t) - min(open_counts) <= 1


@settings(max_examples=100, deadline=None)
@given(cases, st.randoms(use_true_random=False))
def test_the_sample_depends_on_the_sources_alone_not_their_order(sources: list[Source], rnd: random.Random) -> None:
    shuffled = list(sources)
    rnd.shuffle(shuffled)
    assert ids(sample.select(shuffled, "dealii", supports, 12)) == ids(sample.select(sources, "dealii", supports, 12))


@settings(max_examples=150, deadline=None)
@given(cases, case, st.integers(0, 30))
def test_a_source_added_changes_the_sample_locally(sources: list[Source], new: tuple, minimum: int) -> None:
    """The new source enters or not; at most one other case leaves, and none enters."""
    before = set(ids(sample.select(sources, "dealii", supports, minimum)))
    added = source(len(sources), *new)
    after = set(ids(sample.select([*sources, added], "dealii", supports, minimum)))
    assert after - before <= {added.id} and len(before - after) <= 1


def test_the_cost_counts_every_solve_of_the_build_from_the_source() -> None:
    # cells**dim * degree**dim per solve, times the time steps
    assert sample.cost(source(0, cells=10, degree=2)) == 10**2 * 2**2
    assert sample.cost(source(0, template="unit_cube", cells=10, degree=2)) == 10**3 * 2**3
    assert sample.cost(source(0, "heat", cells=10, degree=1, transient=True)) == 10**2 * 20  # (1 - 0) / 0.05
    # no manufactured solution: the numerical reference levels are solves too
    assert sample.cost(source(0, cells=10, degree=1, manufactured=False)) == 10**2 + 20**2
    broken = source(0)
    broken.data["calibration"] = {"cells_across": "many"}
    assert sample.cost(broken) == math.inf


def test_the_stratum_is_family_math_type_and_template() -> None:
    assert sample.stratum(source(0, "convection_diffusion", "circle")) == ("convection_diffusion", ("elliptic",),
                                                                         "circle")
    assert sample.stratum(source(0, "convection_diffusion", "circle", transient=True))[1] == ("parabolic",)


def test_a_registered_track_is_asked_what_it_supports_and_the_minimum_is_fifty() -> None:
    sources = [source(i, FAMILIES[i % 2], TEMPLATES[i % 3], cells=8 + i) for i in range(120)]
    chosen = sample.select(sources, "dealii")
    assert len(chosen) == sample.SAMPLE_MIN and len({sample.stratum(s) for s in chosen}) == 6
    assert sample.select(sources[:30], "dealii") == sorted(sources[:30], key=lambda s: s.id)
    with pytest.raises(UnknownName, match="unknown track"):
        sample.select(sources, "no_such_track")
