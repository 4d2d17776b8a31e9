"""The time-Taylor leak (casekit.validate.taylor): a transient answer that the expansion from t0
reproduces -- its coefficients read off the initial data and the forcing by applying the PDE -- is
refused by validation, and the families' own draws are far from it."""

from __future__ import annotations

import copy
import math

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.authoring.catalogue import time_modes
from casekit.authoring.new import make_case
from casekit.expr import T
from casekit.validate import check_source, taylor
from tests.validity.test_inversion import HEAT

x = sp.Symbol("x")


def test_a_solution_linear_in_time_is_refused_at_order_one() -> None:
    """The imported Burgers siblings' shape: u = s(x) + t B(x), so u(t_end) = u0 + t_end u_t(t0) exactly."""
    src = {**HEAT, "manufactured_solution": {"u": "sin(pi*x)*cos(2*y) + 3*t*x*y*(1 - x)*(1 - y)*exp(x)"}}
    problems = [p for p in check_source(copy.deepcopy(src)) if p.check == "leak.taylor"]
    assert len(problems) == 1 and "order 1" in problems[0].message, [p.render() for p in problems]
    assert problems[0].pointer == "/manufactured_solution"  # a solution finding: a sibling replaces it


def test_modes_that_change_over_the_window_pass() -> None:
    src = {**HEAT, "manufactured_solution": {
        "u": "exp(-4*t)*sin(pi*x)*cos(2*y) + cos(5*t)*x*y*(1 - x)*(1 - y)*exp(x) + sin(5*t)*x**2*y"}}
    assert not [p for p in check_source(copy.deepcopy(src)) if p.check == "leak.taylor"]


@settings(max_examples=30, deadline=None)
@given(a=st.floats(-3.0, 3.0), b=st.floats(-3.0, 3.0), t0=st.floats(0.0, 1.0), span=st.floats(0.05, 2.0),
       degree=st.integers(0, 2))
def test_the_expansion_of_a_polynomial_in_t_is_exact_at_its_degree(a: float, b: float, t0: float, span: float,
                                                                   degree: int) -> None:
    u = (1 + a * T + b * T**2) if degree == 2 else (1 + a * T if degree == 1 else sp.Integer(1))
    u = u * sp.sin(x) + sp.cos(2 * x)
    got = taylor.expansion(u, t0, t0 + span, degree)
    for xv in (0.1, 0.7, 1.3):
        assert math.isclose(float(got.subs(x, xv)), float(u.subs({x: xv, T: t0 + span})), rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=30, deadline=None)
@given(rate=st.floats(0.1, 6.0), order=st.integers(0, 6))
def test_the_partial_sums_of_an_exponential_are_its_taylor_polynomial(rate: float, order: int) -> None:
    got = float(taylor.expansion(sp.exp(-rate * T), 0.0, 1.0, order))
    assert math.isclose(got, sum((-rate) ** n / math.factorial(n) for n in range(order + 1)), rel_tol=1e-9,
                        abs_tol=1e-12)


def test_every_time_behaviour_of_the_catalogue_changes_over_its_window() -> None:
    """No mode of the catalogue is a polynomial in t ('grow' was 1, r t, r^2 t^2: exact at order 2)."""
    for kind in ("decay", "oscillate", "grow", "standing"):
        for mode in time_modes(kind, 2.0):
            if mode.has(T):
                assert not mode.is_polynomial(T), (kind, mode)


def test_a_drawn_burgers_case_of_the_short_horizon_resists_the_expansion() -> None:
    """The level that drew 'grow' modes (a polynomial in t) for Burgers."""
    new = make_case("burgers", "unit_square", {"viscosity": "moderate", "horizon": "short", "solution": "smooth",
                                               "bc": "dirichlet"}, 4242)
    assert not [p for p in check_source(copy.deepcopy(new.source)) if p.check == "leak.taylor"]


def test_a_pressure_without_initial_data_keeps_the_check_out() -> None:
    from casekit.families import FAMILIES

    spec = {"pde": {"time": {"t0": 0, "t_end": 1}}, "ic": {"u": ["0", "0"]}}
    assert not taylor.applies(FAMILIES.get("navier_stokes"), spec)
    assert taylor.applies(FAMILIES.get("heat"), {"pde": {"time": {"t0": 0, "t_end": 1}}, "ic": {"u": "0"}})


@settings(max_examples=50, deadline=None)
@given(orders=st.lists(st.floats(0.0, 2.0), min_size=1, max_size=6), tau=st.floats(1e-6, 0.5))
def test_the_build_refuses_an_expansion_of_order_one_or_two_that_passes_the_gate(orders: list[float],
                                                                               tau: float) -> None:
    found = taylor.passes(orders, tau)
    cheap = [(n, e) for n, e in enumerate(orders) if 1 <= n <= taylor.TAYLOR_ORDER]
    if any(e <= tau for _, e in cheap):
        assert found is not None and found[1] == min(e for _, e in cheap if e <= tau) and found[0] >= 1
    else:
        assert found is None  # order 0 (the initial data) is the leak check's, higher orders a solve's
