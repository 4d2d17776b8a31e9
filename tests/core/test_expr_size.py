"""casekit.expr.size: the size of an expansion is bounded before sympy runs it (issue 27)."""

from __future__ import annotations

import time

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casekit.derive import tidy
from casekit.expr import MAX_LENGTH, X, Y, parse, to_text
from casekit.expr.size import MAX_TERMS, TooLarge, check_printable, estimate, expand, leaves

T = sp.Symbol("t", real=True)
ATOMS = st.sampled_from([X, Y, T, sp.pi, sp.Integer(2), sp.Rational(1, 3), sp.Float(0.25), sp.Integer(-1)])
UNARY = [sp.sin, sp.exp, sp.tanh, lambda a: 1 / (a**2 + 1), lambda a: sp.sqrt(a**2 + 1),
         lambda a: (a**2 + 2) ** sp.Rational(3, 2)]


def _exprs() -> st.SearchStrategy:
    return st.recursive(
        ATOMS,
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=4).map(lambda p: sp.Add(*p)),
            st.lists(inner, min_size=2, max_size=4).map(lambda p: sp.Mul(*p)),
            st.tuples(inner, st.integers(-2, 5)).map(lambda p: p[0] ** p[1]),
            st.tuples(st.sampled_from(UNARY), inner).map(lambda p: p[0](p[1])),
        ),
        max_leaves=14,
    )


def _terms(e: sp.Expr) -> int:
    return len(sp.Add.make_args(sp.expand(e, power_exp=False, log=False)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_exprs())
def test_the_estimate_bounds_the_terms_of_the_expansion(e: sp.Expr) -> None:
    assert estimate(e).terms >= _terms(e), e


@pytest.mark.parametrize(("text", "at_most"), [
    # ten linear level sets of a star times a sine: 66 monomials in x and y, not 3**10 products
    ("sin(x)*" + "*".join(f"({i + 1}*x/7 - {i + 2}*y/11 + 1/{i + 3})" for i in range(10)), 66),
    ("(x + y)**6", 7),
    ("(sin(x) + cos(y) + x)**3", 10),
])
def test_the_estimate_is_tight_on_polynomials_in_atoms(text: str, at_most: int) -> None:
    e = parse(text)
    assert _terms(e) <= estimate(e).terms <= at_most


POWER_9 = "(sin(pi*x) + sin(2*pi*y) + cos(3*pi*x*y) + x**2)**9"


def test_a_power_of_a_sum_is_refused_before_expanding() -> None:
    """The forcing of u = (4 terms)**9 has 3420 terms; tidy expanded and factored it for half a
    minute before its text was refused as too long."""
    u = parse(POWER_9)
    f = -sp.diff(u, X, 2) - sp.diff(u, Y, 2)
    assert estimate(f).terms > MAX_TERMS
    t0 = time.process_time()
    with pytest.raises(TooLarge) as info:
        tidy(f, "the forcing f")
    assert time.process_time() - t0 < 2
    assert info.value.message.startswith("the forcing f is too large to expand") and "\n" not in info.value.message


def test_a_small_expression_expands_as_sympy_does() -> None:
    e = parse("(x + 1)*(y - exp(x + y))**2 + sin(x*(y + 1))")
    assert expand(e) == sp.expand(e, power_exp=False, log=False)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.integers(2, 40))
def test_the_estimate_never_handles_huge_numbers(k: int, n: int) -> None:
    """Powers of long sums saturate instead of growing the count without bound (a few ms)."""
    e = sp.Add(*(sp.sin(i * X) for i in range(1, k + 1))) ** n * sp.Add(*(Y**i for i in range(k)))
    t0 = time.process_time()
    s = estimate(e)
    assert time.process_time() - t0 < 1
    assert s.terms >= 1 and s.work >= 0


def test_the_inverters_use_a_visible_expression_too_large_to_expand_as_given() -> None:
    """A typed forcing of a few characters can expand to hundreds of thousands of terms (here
    C(35, 5)): the forcing-terms inverter expanded it whatever its size."""
    from casekit.solvers.baselines import visible

    text = "(sin(x) + sin(2*x) + sin(3*x) + cos(y) + cos(2*y) + x)**30"
    t0 = time.process_time()
    assert visible.terms([text, "x*y + sin(x)"], 2) and visible.separate(f"({text})*exp(-t)", 2) is None
    assert time.process_time() - t0 < 10
    assert {name for name, _ in visible.terms([text, "x*y + sin(x)"], 2)} == {"x*y", "sin(x)"}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_exprs())
def test_the_leaves_of_a_tree_bound_its_text_from_below(e: sp.Expr) -> None:
    assert leaves(e) <= len(to_text(e))


def test_an_unexpanded_tree_too_long_to_print_is_refused_before_printing() -> None:
    """The laplacian data of a biharmonic case on the gear (a warped solution, kept unexpanded)
    printed as 401290 characters after minutes of printing and hygiene, then the parser refused it."""
    s = sp.Add(*(X**i * Y ** (i % 7) / (i + 2) for i in range(200)))
    e = sp.Add(*(sp.sin(k * s) * sp.cos(s + k) for k in range(1, 80)), evaluate=False)
    t0 = time.process_time()
    with pytest.raises(TooLarge) as info:
        check_printable(e, "the laplacian data on boundary")
    assert time.process_time() - t0 < 2
    assert info.value.message.startswith("the laplacian data on boundary is too long to print")
    check_printable(parse("sin(pi*x)*exp(y) + x**2"))  # a short one passes
    assert leaves(e) > MAX_LENGTH
