"""Late sibling draws (``casekit.authoring.sibling.LATE``): recipes tried after the plain and
adapted ones, for the PDEAgent-Bench records none of whose earlier draws validated.  They add
draws; they never change one that was released."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit import yamlio
from casekit.authoring.sibling import (
    ADAPTED_ATTEMPTS,
    ATTEMPTS,
    CALIBRATION_KEY,
    LATE,
    STEP_DIVISORS,
    STEPPED_SCHEME,
    STEPPED_TURN,
    TIME_ERROR,
    adapted,
    calibration_time_error,
    clean_sibling,
    draw_recipe,
    drawn,
    paced,
    sibling,
    stepped,
)
from casekit.importers.formats.pdeagent_bench import convert
from casekit.validate import check_source

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "cases" / "pdeagent-bench"


def _records(shared_data: Path, ids: set[str]) -> dict[str, dict]:
    out = {}
    with shared_data.open() as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["id"] in ids:
                out[rec["id"]] = rec
    return out


def _released_by_draw() -> dict[int, Path]:
    """The first committed sibling (by path) released from each draw: the draws a re-import
    releases change as records get siblings, so the test follows the committed cases."""
    first: dict[int, Path] = {}
    for path in sorted(CASES.glob("*/*.yaml")):
        draw = drawn(yamlio.loads(path.read_text()))
        if draw is not None:
            first.setdefault(draw, path)
    return first


RELEASED = _released_by_draw()


def test_plain_adapted_and_late_draws_are_all_released() -> None:
    """The redraw test below covers every kind of recipe: a plain draw, an adapted one and a late one."""
    assert 0 in RELEASED
    assert any(6 <= d < ADAPTED_ATTEMPTS for d in RELEASED)
    assert any(d >= ADAPTED_ATTEMPTS for d in RELEASED)


@pytest.mark.parametrize("draw", sorted(RELEASED))
def test_released_siblings_are_redrawn_as_they_were(shared_data: Path, draw: int) -> None:
    """The late draws and the builder keys they brought change no earlier draw, and a late draw
    is redrawn as it was released: a committed sibling's solution is what its draw still gives."""
    committed = yamlio.loads(RELEASED[draw].read_text())
    anchor = committed["provenance"]["anchor"]
    rec = _records(shared_data, {anchor})[anchor]
    again = sibling(convert(rec, repair=True).source, anchor, draw)
    assert again["manufactured_solution"] == committed["manufactured_solution"]


def test_late_draws_follow_the_adapted_ones_once_each() -> None:
    assert ADAPTED_ATTEMPTS == 18
    assert len(LATE) == ATTEMPTS - ADAPTED_ATTEMPTS
    for k, overlay in enumerate(LATE):
        recipe = adapted({}, ADAPTED_ATTEMPTS + k)
        assert recipe["periodic"] == "boundary"
        assert all(recipe[key] == value for key, value in overlay.items() if key not in ("faster", "shape"))
        if "shape" in overlay:  # in place of the record's character, whatever it was
            assert adapted({"solution": {"kind": "poly", "options": {"degree": 3}}},
                           ADAPTED_ATTEMPTS + k)["solution"] == overlay["shape"]
    with pytest.raises(ValueError, match="draws 0 to"):
        adapted({}, ATTEMPTS)


POISSON_FOUR_HOLES = "poisson_multihole_4_exp"


def test_late_draws_are_reproducible(shared_data: Path) -> None:
    src = convert(_records(shared_data, {POISSON_FOUR_HOLES})[POISSON_FOUR_HOLES], repair=True).source
    for k in range(len(LATE)):
        a = sibling(src, POISSON_FOUR_HOLES, ADAPTED_ATTEMPTS + k)
        assert a == sibling(src, POISSON_FOUR_HOLES, ADAPTED_ATTEMPTS + k)
        other = sibling(src, "another_anchor", ADAPTED_ATTEMPTS + k)
        assert a["manufactured_solution"] != other["manufactured_solution"]


@pytest.mark.slow
def test_a_bubble_on_every_carrier_answers_the_forcing_terms_fit(shared_data: Path) -> None:
    """Poisson on a square with four holes (an outline of degree 12): the level set capped at
    degree 10 misses a hole, its monomials are among the forcing's terms, and the fit of those to
    the boundary data came within 1e-2 of the answer in every earlier draw.  The first late draw's
    bubble vanishes on every carrier, and its sibling validates clean."""
    src = convert(_records(shared_data, {POISSON_FOUR_HOLES})[POISSON_FOUR_HOLES], repair=True).source
    assert LATE[0]["level_degree"] == "all"
    assert check_source(sibling(src, POISSON_FOUR_HOLES, ADAPTED_ATTEMPTS)) == []


def _late(shared_data: Path, anchor: str, k: int) -> dict:
    src = convert(_records(shared_data, {anchor})[anchor], repair=True).source
    return sibling(src, anchor, ADAPTED_ATTEMPTS + k)


@pytest.mark.slow
def test_a_tenth_of_the_amplitude_keeps_a_logistic_forcing_from_cancelling(shared_data: Path) -> None:
    """Logistic reaction on a T-junction: the square of a bubble on its seven lines, multiplied
    out, cancelled to some 1e-7 of the forcing in every earlier draw; a tenth of the amplitude
    prints a forcing exact in double precision, and the sibling validates clean."""
    assert LATE[1]["bubble_scale"] == LATE[1]["shape_scale"] == 0.1
    assert check_source(_late(shared_data, "rd_tjunction_logistic", 1)) == []


@pytest.mark.slow
def test_a_bubble_in_every_mode_answers_the_wave_time_coefficients(shared_data: Path) -> None:
    """A wave on a square with Dirichlet sides: the modes' skewed sines are nearly eigenfunctions,
    the forcing's time coefficients print their shapes and, with the initial data, span the answer
    (draw 6); with a bubble in every mode (draw 20) they do not."""
    src = convert(_records(shared_data, {"wave_periodic_trig"})["wave_periodic_trig"], repair=True).source
    assert any("time_coefficients" in p.message for p in check_source(sibling(src, "wave_periodic_trig", 6)))
    assert check_source(sibling(src, "wave_periodic_trig", ADAPTED_ATTEMPTS + 2)) == []


@pytest.mark.slow
def test_an_oscillatory_shape_answers_the_nearest_lobe_datum(shared_data: Path) -> None:
    """Convection-diffusion on a dumbbell: the lobes' data are the solution composed with a map
    that fixes the circle; a shape of five or six half-waves (draw 21) moves far enough between a
    point and its image that the nearest datum is no answer."""
    case = _late(shared_data, "convdiff_dumbbell_diag_supg", 3)
    assert case["manufactured_solution"]["u"].count("pi") >= 2
    assert check_source(case) == []


@pytest.mark.slow
@pytest.mark.parametrize(("record", "late"), [("rd_eccentric_cubic", 5), ("rd_annulus_cubic", 14)])
def test_a_cubic_reaction_record_gets_a_numerical_sibling(shared_data: Path, record: str, late: int) -> None:
    """u + u**3 on an (eccentric) annulus: the steady-bubble recipes (draws 22, 23 and 32) printed its
    forcing, but a manufactured sibling of a transient polynomial reaction is answered by n-th roots of
    its forcing (reaction_powers), so every draw of such a record is a numerical sibling: its problem
    with a drawn source, zero boundary values and two reference levels, clean under every rule."""
    case = _late(shared_data, record, late)
    assert "manufactured_solution" not in case and len(case["reference"]["levels"]) == 2
    anchor = convert(_records(shared_data, {record})[record], repair=True).source
    assert case["pde"]["params"] == anchor["pde"]["params"]
    assert check_source(case) == []


@settings(max_examples=40, deadline=None)
@given(span=st.floats(0.05, 1.0), steps=st.integers(5, 80), rate=st.floats(0.5, 40.0),
       scheme=st.sampled_from(["backward_euler", "crank_nicolson", "bdf2"]),
       factor=st.sampled_from(["decay", "oscillate"]))
def test_a_paced_draw_keeps_the_calibration_time_error_within_the_bound(span: float, steps: int, rate: float,
                                                                        scheme: str, factor: str) -> None:
    """:func:`paced` lowers the time rate (never raises it) until the calibration's time error at
    the record's step and scheme is at most TIME_ERROR, and leaves a rate already within it."""
    source = {"family": "reaction_diffusion", "pde": {"time": {"t0": 0.0, "t_end": span}},
              "calibration": {"dt": span / steps, "scheme": scheme}}
    rec = {"time": {"t_end": span, "factor": factor, "rate": rate}, "modes": 2}
    out = paced(source, rec)
    assert out["time"]["rate"] <= rate
    assert calibration_time_error(source, out) <= TIME_ERROR
    if calibration_time_error(source, rec) <= TIME_ERROR:
        assert out == rec


def test_late_paced_draws_pace_the_rates_of_a_transient_record_only(shared_data: Path) -> None:
    """The paced late draws: a first-order family's modes become a rotating pair at a rate whose
    calibration time error is within TIME_ERROR; a steady record's recipe has no time to pace."""
    paced_draws = [ADAPTED_ATTEMPTS + k for k, overlay in enumerate(LATE) if "paced" in overlay]
    assert paced_draws and all(LATE[k - ADAPTED_ATTEMPTS]["paced"] == "oscillate" for k in paced_draws)
    src = convert(_records(shared_data, {LOGISTIC})[LOGISTIC], repair=True).source
    for k in paced_draws:
        rec = draw_recipe(src, k)
        assert rec["time"]["factor"] == "oscillate" and "paced" not in rec
        assert calibration_time_error(src, rec) <= TIME_ERROR
    steady = convert(_records(shared_data, {POISSON_FOUR_HOLES})[POISSON_FOUR_HOLES], repair=True).source
    assert "time" not in draw_recipe(steady, paced_draws[0])


#: a logistic reaction-diffusion record calibrated with backward Euler in 40 steps: its sibling's
#: draw 0 (the record's rates stretched to its window) made a 4 % calibration error (dolfinx build)
LOGISTIC = "reaction_diffusion_logistic_high_rho"


def test_a_draw_rejected_for_a_too_fast_time_is_skipped_for_a_numerical_sibling(shared_data: Path) -> None:
    """A build rejected draw 0 of this logistic record's manufactured sibling, whose calibration's time
    error was some 2 %: a manufactured draw sharing its rates would be skipped for it, then paced and
    stepped draws tried (test_a_paced_draw_..., test_a_stepped_draw_...).  A transient polynomial
    reaction's sibling is numerical now (no time modes to judge): the next draw is the sibling."""
    src = convert(_records(shared_data, {LOGISTIC})[LOGISTIC], repair=True).source
    assert calibration_time_error(src, draw_recipe(src, 0)) > 10 * TIME_ERROR
    why = "the reference is within 0.0513 of the time_coefficients span: 0.121 x tau_acc (dolfinx build)"
    case, draw, failures = clean_sibling(src, LOGISTIC, rejected={0: why})
    assert draw == 1 and len(failures) == 1 and failures[0].startswith("draw 0: a build rejected it")
    assert case is not None and "manufactured_solution" not in case
    assert case["calibration"]["scheme"] == STEPPED_SCHEME == "bdf2"


@settings(max_examples=40, deadline=None)
@given(span=st.floats(0.05, 1.0), steps=st.integers(5, 80),
       scheme=st.sampled_from(["backward_euler", "crank_nicolson", "bdf2"]), order=st.sampled_from([1, 2]))
def test_a_stepped_draw_turns_its_modes_and_refines_the_calibration_step_instead(span: float, steps: int,
                                                                                 scheme: str, order: int) -> None:
    """:func:`stepped` sets the rate to STEPPED_TURN radians over the window and steps the
    calibration at the record's step over the first divisor that keeps the time error within
    TIME_ERROR (a first-order family with BDF2); past the last divisor it paces the rate there."""
    family = "reaction_diffusion" if order == 1 else "wave"
    dt = span / steps
    source = {"family": family, "pde": {"time": {"t0": 0.0, "t_end": span, "dt": dt}},
              "calibration": {"dt": dt, "scheme": scheme}}
    rec = {"time": {"t_end": span, "factor": "oscillate", "rate": 1.0}, "modes": 2}
    out = stepped(source, rec)
    assert calibration_time_error(source, out) <= TIME_ERROR
    assert ("scheme" in out[CALIBRATION_KEY]) == (order == 1)
    divisor = dt / out[CALIBRATION_KEY]["dt"]
    assert any(abs(divisor - m) < 1e-4 * m for m in STEP_DIVISORS)
    if out["time"]["rate"] < float(f"{STEPPED_TURN / span:.3g}"):  # paced: even the finest step was too coarse
        assert abs(divisor - STEP_DIVISORS[-1]) < 1e-4 * divisor
    else:
        assert abs(out["time"]["rate"] * span - STEPPED_TURN) < 1e-2 * STEPPED_TURN
        coarser = [m for m in STEP_DIVISORS if m < divisor * (1 - 1e-4)]
        for m in coarser:  # the first divisor within the bound, not a finer one
            assert calibration_time_error(source, {**out, CALIBRATION_KEY: {**out[CALIBRATION_KEY], "dt": dt / m}}
                                          ) > TIME_ERROR


#: a linear reaction-diffusion record with 50 backward-Euler steps, one of the eight paced siblings
#: that leak.taylor refused (order 2 within 0.00175 of the hidden output)
LINEAR_BASIC = "reaction_diffusion_linear_basic"


def test_a_stepped_sibling_is_released_where_its_paced_one_is_answered_by_the_expansion(
        shared_data: Path) -> None:
    src = convert(_records(shared_data, {LINEAR_BASIC})[LINEAR_BASIC], repair=True).source
    paced_draw = ADAPTED_ATTEMPTS + next(k for k, overlay in enumerate(LATE) if "paced" in overlay) + 1
    assert {p.check for p in check_source(sibling(src, LINEAR_BASIC, paced_draw))} == {"leak.taylor"}
    first = ADAPTED_ATTEMPTS + next(k for k, overlay in enumerate(LATE) if "stepped" in overlay)
    case = sibling(src, LINEAR_BASIC, first)
    assert check_source(case) == []
    assert case["pde"]["time"] == src["pde"]["time"]  # the record's window and suggested step
    assert case["calibration"] == {**src["calibration"], "scheme": "bdf2", "dt": src["pde"]["time"]["dt"] / 2}


@pytest.mark.parametrize(("template", "params"), [
    ("star", {"points": 6, "inner_radius": 0.3, "outer_radius": 0.7}),
    ("gear", {"teeth": 10, "base_radius": 0.5, "tooth_height": 0.15}),
    ("star", {"points": 7, "inner_radius": 0.35, "outer_radius": 0.75}),
])
def test_a_paired_level_set_is_the_full_product_in_fewer_coordinates(template: str, params: dict) -> None:
    """``level_degree: paired`` (draw 31): every carrier's level set, parallel lines and concentric
    circles multiplied in pairs -- the same function as the full product up to its scale, zero on
    the whole outline, and on a centrally symmetric outline spelling half its coordinates."""
    import numpy as np

    from casekit.authoring.builder import UNCAPPED, capped_level_set, paired_level_set
    from casekit.domains import resolve
    from casekit.expr import to_numpy, to_text

    domain = resolve(template, params)
    full, paired = capped_level_set(domain, set(), set(), UNCAPPED), paired_level_set(domain, set(), set())
    points = np.random.default_rng(0).uniform(-0.6, 0.6, (100, 2))
    ratio = to_numpy(paired, 2)(points, 0.0) / to_numpy(full, 2)(points, 0.0)
    assert np.ptp(ratio) < 1e-9 * abs(np.mean(ratio))
    outline = domain.geometry.tag_points("boundary")
    assert np.max(np.abs(to_numpy(paired, 2)(outline, 0.0))) < 1e-12

    def spelled(e: object) -> int:
        return sum(to_text(e).count(c) for c in "xy")
    symmetric = template == "gear" or params["points"] % 2 == 0
    assert spelled(paired) == (spelled(full) // 2 if symmetric else spelled(full))


@pytest.mark.slow
def test_a_paired_bubble_prints_the_warped_data_of_a_star(shared_data: Path) -> None:
    """Helmholtz on a six-pointed star: a capped bubble's monomials, fitted to the data of the
    edges it does not vanish on, gave the answer (draw 0); the full product's data composed with
    the outline's warp printed past the length limit; paired (draw 31) it validates."""
    assert LATE[13]["level_degree"] == "paired"
    assert check_source(_late(shared_data, "helmholtz_star_6point", 13)) == []


