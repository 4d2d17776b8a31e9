"""A transient datum that expands past the parser's limits prints collected by its time functions
(casekit.derive._by_time_function); one that fits keeps its expanded text."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.derive import _by_time_function
from casekit.expr import T

x, y = sp.symbols("x y")


@settings(max_examples=25, deadline=None)
@given(r=st.integers(1, 9), a=st.integers(-5, 5), b=st.integers(1, 7))
def test_collecting_by_time_functions_keeps_the_value(r: int, a: int, b: int) -> None:
    e = sp.expand((x**2 + a * y + sp.sin(b * x)) * (1 + sp.exp(r * T)) ** 2 + x * y * sp.cos(r * T))
    c = _by_time_function(e)
    assert sp.simplify(c - e) == 0
    # each time function printed once per power, not once per term
    assert sp.srepr(c).count("exp") <= 2 and len(str(c)) < len(str(e))


def test_a_steady_expression_is_left_alone() -> None:
    e = sp.expand((x + y) ** 3)
    assert _by_time_function(e) == e
