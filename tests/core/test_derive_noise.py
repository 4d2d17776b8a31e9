"""Float noise (issue 30): derivation prints short values, and the validator's float_noise check
refuses round-off of them."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from casekit.derive_noise import (
    MAX_ULPS,
    NOISE_RTOL,
    SHORT_DIGITS,
    ZERO_MOVE,
    is_noise,
    printed_short,
    short_value,
    significant_digits,
    snap_carrier,
    snap_expr,
    snap_float,
    snap_text,
    text_noise,
)
from casekit.domains.geometry.carriers import LineCarrier
from casekit.expr import as_expr
from casekit.expr.hygiene import Sampler
from casekit.model.source import load_source_dict
from casekit.validate import check_source
from tests.helpers import poisson

CASES = Path(__file__).resolve().parents[2] / "cases"
_GRID = np.linspace(0.0, 1.0, 12)
#: the unit square, as derivation's print pass samples a case's domain
SQUARE = Sampler(np.array([(a, b) for a in _GRID for b in _GRID]), (0.0,), 2)


def _ulps(v: float, n: int) -> float:
    for _ in range(abs(n)):
        v = math.nextafter(v, math.inf if n > 0 else -math.inf)
    return v


short_decimals = st.builds(lambda m, e: float(f"{m}e{e}"), st.integers(1, 10**SHORT_DIGITS - 1), st.integers(-12, 6))


@settings(max_examples=300, deadline=None)
@given(short_decimals, st.integers(-8, 8), st.booleans())
def test_round_off_of_a_short_decimal_prints_the_decimal(d: float, n: int, negative: bool) -> None:
    d = -d if negative else d
    v = _ulps(d, n)
    out = snap_float(v)
    assert abs(out - v) <= NOISE_RTOL * abs(v)
    assert significant_digits(out) <= SHORT_DIGITS
    assert (is_noise(v) is None) == (significant_digits(v) <= SHORT_DIGITS or v == out)


@settings(max_examples=300, deadline=None)
@given(st.integers(-10**6, 10**6).filter(bool), st.integers(2, 1000), st.integers(-8, 8))
def test_round_off_of_a_simple_rational_prints_its_nearest_double(p: int, q: int, n: int) -> None:
    exact = Fraction(p, q)
    v = _ulps(float(exact), n)
    out = snap_float(v)
    assert abs(out - v) <= NOISE_RTOL * abs(v)
    if significant_digits(v) >= 15:
        s = short_value(v)
        assert s is not None and float(s) == out
        assert snap_expr(sp.Float(v) * sp.Symbol("x")) == sp.Rational(out).limit_denominator(1000) * sp.Symbol("x")


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e6))
def test_a_value_is_never_moved_by_more_than_the_tolerance(v: float) -> None:
    out = snap_float(v)
    assert out == v or abs(out - v) <= NOISE_RTOL * abs(v)
    assert out == v or significant_digits(v) >= 15


def test_values_that_are_not_near_a_short_value_are_left_alone() -> None:
    for v in (math.sqrt(2), math.pi, math.cos(math.radians(1)), 0.8660254037844386, 0.25184877970227915,
              595.120987654321, 1e-3, 0.1, 2867.2):
        assert snap_float(v) is v or snap_float(v) == v
        assert is_noise(v) is None
    e = sp.Float(0.8660254037844386) * sp.Symbol("x") + sp.Rational(1, 3)
    assert snap_expr(e) is e
    c = LineCarrier((0.5, 0.25), (0.6, 0.8))
    assert snap_carrier(c, 1.0) is c


def test_the_examples_of_the_issue() -> None:
    assert snap_float(0.10000000000000003) == 0.1
    assert snap_float(1.0000000000000004) == 1.0
    assert snap_float(0.7999999999999998) == 0.8
    assert short_value(0.11111111111111142) == Fraction(1, 9)
    assert snap_float(2.000000000000284) == 2.0
    # round-off of zero where it does not move its expression, a term of its own where it does
    assert [n.zero for n in text_noise("10000*x**2 - 9.499203192566231e-13", sampler=SQUARE)] == [True]
    assert text_noise("x - 9.499203192566231e-13", sampler=SQUARE) == []
    assert snap_text("sin(6.123233995736766e-17*pi*y)*x + 1", sampler=SQUARE) == "1"
    assert snap_text("-sin(pi*x)*cos(pi*(0.7999999999999998*x + 3/10))") == "-sin(pi*x)*cos(pi*(0.8*x + 3/10))"
    # cos(90 deg) of a sector's edge is zero; the normal's noise goes too
    c = LineCarrier((6.123233995736766e-17, 1.0), (-1.0, 6.123233995736766e-17))
    assert snap_carrier(c, 2.0) == LineCarrier((0.0, 1.0), (-1.0, 0.0))


def test_float_noise_fails_on_a_noisy_source_and_names_the_literal() -> None:
    noisy = poisson(id="poisson_noisy", pde={"params": {"kappa": 1.0}, "forcing": {
        "f": "0.7999999999999998*x + sin(6.123233995736766e-17*pi*y) + 1"}})
    problems = [p for p in check_source(noisy) if p.check == "float_noise"]
    assert {p.pointer for p in problems} == {"/pde/forcing/f"}
    assert any("0.7999999999999998" in p.message and "0.8" in p.message for p in problems)
    assert any("round-off of zero" in p.message for p in problems)
    assert not [p for p in check_source(poisson()) if p.check == "float_noise"]


def test_a_sector_derives_exact_data_on_its_edges() -> None:
    """The right-angle sector's second edge lies on x = 0 although cos(90 deg) is 6e-17 in floats:
    its Neumann data print without a trace of it, and a noisy manufactured literal derives exactly."""
    src = poisson(id="poisson_sector_noise", domain={"template": "sector", "params": {"angle": 90.0}},
                  pde={"params": {"kappa": 1.0}},
                  manufactured_solution={"u": "sin(pi*(0.7999999999999998*x + y)) + x*y"},
                  boundary={"edge_start": "dirichlet", "arc": "dirichlet", "edge_end": "neumann"},
                  eval_grid={"nx": 21, "ny": 21})
    from casekit.derive import derive
    from casekit.model.source import CaseSource

    spec = derive(CaseSource.from_dict(src)).case_spec()
    text = str(spec["pde"]) + str(spec["bc"])
    assert "e-17" not in text and "0.7999999999999998" not in text and "4*x/5" in text
    assert not [p for p in check_source(src) if p.check in ("float_noise", "hygiene", "residual", "boundary_data")]


# --------------------------------------------------------------------------- the print pass keeps derived data exact
_SKELETON = re.compile(r"(?<![A-Za-z_0-9.])(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _literals(text: str) -> list[float]:
    return [float(m) for m in _SKELETON.findall(text)]


@st.composite
def near_short(draw: st.DrawFn) -> float:
    """A literal as hygienic printing writes one: a short decimal or simple rational some ulps off
    (noise, or an exact value that rounds near one), or any double."""
    kind = draw(st.sampled_from(["decimal", "rational", "any"]))
    if kind == "decimal":
        v = float(f"{draw(st.integers(1, 10**6))}e{draw(st.integers(-8, 8))}")
    elif kind == "rational":
        v = draw(st.integers(1, 10**7)) / draw(st.integers(2, 1000))
    else:
        return draw(st.floats(min_value=1e-9, max_value=1e9))
    return _ulps(v, draw(st.integers(-40, 40)))


@st.composite
def polynomial_text(draw: st.DrawFn) -> str:
    terms = draw(st.lists(st.tuples(near_short(), st.integers(0, 3), st.integers(0, 3),
                                    st.booleans()), min_size=1, max_size=6))
    return " ".join(f"{'-' if neg else '+'} {c!r}*x**{i}*y**{j}" for c, i, j, neg in terms).lstrip("+ ")


@settings(max_examples=200, deadline=None)
@given(polynomial_text())
def test_the_print_pass_moves_no_literal_by_more_than_a_few_ulps(text: str) -> None:
    """Derived data are exact: whatever the print pass snaps is within MAX_ULPS ulps of what was
    printed, written in place (the rest of the text is the same), and what it leaves is not
    flagged (a derived value further from a short one is that value rounded, not noise)."""
    out = snap_text(text, sampler=SQUARE)
    assert _SKELETON.sub("#", out) == _SKELETON.sub("#", text)
    for before, after in zip(_literals(text), _literals(out), strict=True):
        assert after == before or abs(after - before) <= MAX_ULPS * math.ulp(before)
        assert after == before or printed_short(before) == after
    assert text_noise(out, sampler=SQUARE) == []
    assert snap_text(out, sampler=SQUARE) == out


def test_exact_derived_values_near_a_short_one_are_left_as_they_are() -> None:
    """A gear's forcing: 4870144.000000006 is the exact coefficient rounded (6 ulps from 4870144),
    2526984.943752168 is within 1e-12 of 2526984.94375 and 1170455.7606714873 of a rational of
    denominator below 1000; writing those would make the forcing inexact."""
    text = "1170455.7606714873*x**9 - 4870144.000000006*x**8*y - 2526984.943752168*x**4*y**2 + 9977855.999999993*y"
    assert snap_text(text, sampler=SQUARE) == text.replace("9977855.999999993", "9977856")  # 3.8 ulps
    assert [n.literal for n in text_noise(text, sampler=SQUARE)] == ["9977855.999999993"]


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1e-13, max_value=1e-12), st.floats(min_value=1e-3, max_value=1e3),
       st.sampled_from(["{c}*x*y + {a}", "sin({c}*pi*y)*x + {a}*x", "{a}*exp(x) - {c}*y**2", "{a}*(x + {c}*y)"]))
def test_round_off_of_zero_goes_only_where_it_does_not_move_the_expression(c: float, a: float, form: str) -> None:
    assume(significant_digits(c) >= 15)  # a long literal, as round-off prints
    # neither a few ulps from a short value (9.999999999999998e-13 prints 1e-12, 0.0010000000000000002 0.001)
    assume(printed_short(c) is None and printed_short(a) is None)
    text = form.format(c=repr(c), a=repr(a))
    out = snap_text(text, sampler=SQUARE)
    before, after = as_expr(text), as_expr(out)
    scale = max(SQUARE.magnitude(before), *(SQUARE.magnitude(t) for t in sp.Add.make_args(before)))
    assert SQUARE.magnitude(after - before) <= ZERO_MOVE * scale
    dropped = as_expr(form.format(c="0", a=repr(a)))
    assert (out == text) == (SQUARE.magnitude(dropped - before) > ZERO_MOVE * scale)
    assert text_noise(out, sampler=SQUARE) == []


def test_a_term_of_some_weight_is_not_round_off() -> None:
    text = "5.123456789012345e-13*x + 1"  # 5e-13 of the sum: more than double precision's share
    assert snap_text(text, sampler=SQUARE) == text and text_noise(text, sampler=SQUARE) == []
    assert snap_text("5.123456789012345e-17*x + 1", sampler=SQUARE) == "1"
    # without points to measure on (a reaction term of u), nothing is dropped and nothing flagged
    assert snap_text("5.123456789012345e-17*u + u**2", sp.Symbol("u"), SQUARE) == "5.123456789012345e-17*u + u**2"
    assert text_noise("5.123456789012345e-17*u + u**2", ("u",), SQUARE) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", ["pdeagent-bench/poisson/poisson_gear_6teeth_poly.yaml",
                                  "pdeagent-bench/reaction_diffusion/reaction_diffusion_rd_star_5_linear.yaml"])
def test_derived_forcing_stays_exact_on_the_cases_the_print_pass_broke(path: str) -> None:
    """The print pass once moved these forcings' literals by up to 1e-12 (residual_inexact 8.7e-12
    and 5.8e-11); they derive exact and without float noise."""
    problems = check_source(load_source_dict(CASES / path), CASES / path)
    assert not [p for p in problems if p.check in ("residual", "residual_inexact", "float_noise")], problems


def test_the_print_sampler_never_aliases_with_a_structured_grid() -> None:
    """Every ``len // 150``-th point of a 100-column grid has x = 0: printing against those took
    sin(2*pi*x) for zero and dropped it from a tall periodic strip's initial and boundary data
    (every sibling draw of wave_periodic_exp_tall disagreed with its own solution).  A stride that
    aliases is replaced by one coprime to the number of points; one that does not is kept."""
    from casekit.derive_noise import MIN_SPREAD, PRINT_POINTS, print_sampler

    xs, ys = np.meshgrid(np.linspace(0, 1, 100), np.linspace(0, 1.5, 150))
    grid = np.column_stack([xs.ravel(), ys.ravel()])  # rows of 100 points: stride 100 aliases
    pts = np.asarray(print_sampler(grid, (0.0,), 2).points)
    assert len(pts) == PRINT_POINTS
    assert min(np.unique(pts[:, i]).size for i in range(2)) >= MIN_SPREAD
    rng = np.random.default_rng(0)
    scattered = rng.random((15000, 2))
    assert np.array_equal(np.asarray(print_sampler(scattered, (0.0,), 2).points), scattered[::100])
    e = "sin(2*pi*x)*cos(pi*y) + 1"
    assert "sin" in snap_text(e, sampler=print_sampler(grid, (0.0,), 2))
