"""casekit.authoring.time_error: the calibration's time error on a drawn transient solution."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.authoring.time_error import FIRST_ORDER_SCHEMES, relative_error, time_functions
from casekit.expr import T


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.02, 0.4), n=st.integers(10, 80))
def test_backward_euler_on_a_slow_decay_is_the_textbook_error(a: float, n: int) -> None:
    """For a small rate x window ``a`` over ``n`` steps backward Euler's error is a^2 / (2 n) (the
    undamped model's a little more: the decayed mode is what it is relative to)."""
    e = relative_error([sp.exp(-a * T)], 0.0, 1.0, 1.0 / n, "backward_euler")
    assert a * a / (2 * n) <= e <= a * a / (2 * n) * math.exp(a) * (1 + a)


@settings(max_examples=30, deadline=None)
@given(rate=st.floats(0.5, 20.0), n=st.integers(5, 60), scheme=st.sampled_from(sorted(FIRST_ORDER_SCHEMES)))
def test_the_error_grows_with_the_rate_and_a_second_order_scheme_makes_less(rate: float, n: int,
                                                                             scheme: str) -> None:
    modes = lambda r: [sp.exp(-r * T), sp.cos(r * T), sp.sin(r * T)]  # noqa: E731
    e = relative_error(modes(rate), 0.0, 0.2, 0.2 / n, scheme)
    assert relative_error(modes(rate / 2), 0.0, 0.2, 0.2 / n, scheme) <= e
    if FIRST_ORDER_SCHEMES[scheme] == 2:
        assert e <= relative_error(modes(rate), 0.0, 0.2, 0.2 / n, "backward_euler")


def test_a_wave_steps_with_newmark_whatever_the_scheme_says() -> None:
    e = relative_error([sp.cos(5 * T + sp.Rational(1, 3))], 0.0, 0.5, 0.01, "ignored", time_order=2)
    assert 0 < e < 1e-3  # (omega T)^3 / (12 n^2) order: 2.5^3 / (12 * 2500) = 5e-4


def test_an_unknown_scheme_is_named() -> None:
    with pytest.raises(ValueError, match=r"unknown time scheme 'leapfrog'.*backward_euler"):
        relative_error([sp.exp(-T)], 0.0, 1.0, 0.1, "leapfrog")


def test_the_time_functions_of_a_solution_are_read_off_its_terms() -> None:
    u = "32*x*y*(x - 1)*(y - 1)*exp(-27*t/4) + exp(-5*t/2)*sin(2*pi*x)*cos(pi*(6*x/5 + 2*y)) + x**2"
    assert set(time_functions({"u": u})) == {sp.exp(-sp.Rational(27, 4) * T), sp.exp(-sp.Rational(5, 2) * T),
                                             sp.Integer(1)}
