"""Float noise (issue 30): derivation prints short values, and the validator's float_noise check
refuses round-off of them."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.derive_noise import (
    NOISE_RTOL,
    SHORT_DIGITS,
    is_noise,
    short_value,
    significant_digits,
    snap_carrier,
    snap_expr,
    snap_float,
    snap_text,
    text_noise,
)
from casekit.domains.geometry.carriers import LineCarrier
from casekit.expr.hygiene import Sampler
from casekit.validate import check_source
from tests.helpers import poisson

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

