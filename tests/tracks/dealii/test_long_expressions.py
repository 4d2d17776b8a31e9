"""Expressions too long for muParser (20000 characters) go to casekit's deal.II program as a chain
of definitions (``solvers/chain.py``): every piece within the budget, the chain equal to the
expression, and any text within the limit printed exactly as before.  Pure Python: no deal.II
needed (the solve on an imported case that needs a chain is in test_imported_cases.py)."""

from __future__ import annotations

import random

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.expr import to_muparser
from casekit.tracks.dealii.solvers import mu
from casekit.tracks.dealii.solvers.chain import BUDGET, LIMIT, parse_chain, to_chain

X, Y, T = sp.symbols("x y t")


def _back(text: str) -> sp.Expr:
    """muParser text read back by sympy (``^`` the power, ``ln`` the logarithm)."""
    return sp.sympify(text.replace("^", "**").replace("ln(", "log("), locals={"x": X, "y": Y, "t": T, "pi": sp.pi})


def _substituted(text: str) -> sp.Expr:
    """The chain's final expression with every definition substituted back, last first."""
    defs, final = parse_chain(text)
    e = _back(final)
    for name, body in reversed(defs):
        e = e.subs(sp.Symbol(name), _back(body))
    return e


def _equal_at_random_points(a: sp.Expr, b: sp.Expr, seed: int) -> bool:
    fa, fb = sp.lambdify((X, Y, T), a), sp.lambdify((X, Y, T), b)
    rng = random.Random(seed)
    for _ in range(6):
        p = [rng.uniform(-0.9, 0.9) for _ in range(3)]
        va, vb = float(fa(*p)), float(fb(*p))
        if abs(va - vb) > 1e-10 * max(1.0, abs(va)):
            return False
    return True


def _edge(k: int) -> sp.Expr:
    """A star's edge line with 16-digit rational coefficients, as the imported cases have them."""
    c = sp.Rational(9507680331652975 + 7919 * k, 10**16)
    s = sp.Rational(3099034480463101 - 104729 * k, 10**16)
    return c * X + s * Y - sp.Rational(18594206882778602 + k, 10**17)


LINEAR = [_edge(k) for k in range(12)]
ATOMS = [X, Y, T, sp.sin(sp.pi * X), sp.exp(X / 3), sp.cos(2 * sp.pi * Y * T), X**2 * Y, *LINEAR]


@st.composite
def long_expressions(draw):  # type: ignore[no-untyped-def]
    """Sums of products of atoms (the star's edges among them), some squared or in a function."""
    terms = []
    for _ in range(draw(st.integers(1, 12))):
        factors = draw(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=8))
        term = sp.Rational(draw(st.integers(-999, 999).filter(bool)), draw(st.integers(1, 997))) * sp.Mul(*factors)
        wrap = draw(st.sampled_from(["none", "square", "sin"]))
        terms.append(term**2 if wrap == "square" else sp.sin(term) if wrap == "sin" else term)
    return sp.Add(*terms)


@settings(max_examples=40, deadline=None)
@given(long_expressions(), st.sampled_from([300, 600, 1500]))
def test_every_piece_fits_and_the_chain_is_the_expression(expr, budget) -> None:  # type: ignore[no-untyped-def]
    text = to_chain(expr, budget=budget, limit=budget)
    if len(to_muparser(expr)) <= budget:
        assert text == to_muparser(expr)
        return
    defs, final = parse_chain(text)
    assert defs, text
    for name, body in defs:
        assert name.startswith("_c") and len(body) <= budget, (name, len(body))
    assert len(final) <= budget
    names = [n for n, _ in defs]
    assert len(set(names)) == len(names)
    for k, (_, body) in enumerate(defs):  # a definition uses only earlier names
        used = {s.name for s in _back(body).free_symbols if s.name.startswith("_c")}
        assert used <= set(names[:k]), (k, used)
    assert _equal_at_random_points(_substituted(text), expr, seed=len(text))


@settings(max_examples=40, deadline=None)
@given(long_expressions())
def test_a_text_within_the_limit_is_unchanged_byte_for_byte(expr) -> None:  # type: ignore[no-untyped-def]
    text = to_muparser(expr)
    if len(text) <= LIMIT:
        assert to_chain(expr) == text
        assert ";" not in text and ":=" not in text  # muParser has neither: a chain is unambiguous


def test_a_star_manufactured_solution_is_split_under_the_budget() -> None:
    """Data of poisson_star_6pt_poly's kind, each far over muParser's 20000 characters: the
    Laplacian of a product of twelve edge lines with 16-digit rationals (common subexpressions), a
    product of ten expanded (none), and their sum."""
    product = sp.Mul(*LINEAR) * (X + sp.Rational(149, 100)) / 5 + (sp.Rational(5, 6) * Y + sp.S.Half) ** 3
    laplacian = sp.diff(product, X, 2) + sp.diff(product, Y, 2)
    expanded = sp.expand(sp.Mul(*LINEAR[:10]))
    for expr, text in ((laplacian, to_chain(laplacian)), (expanded, to_chain(expanded)),
                       (laplacian + expanded, to_chain(laplacian + expanded))):
        assert len(to_muparser(expr)) > 20000
        defs, final = parse_chain(text)
        assert defs and all(len(b) <= BUDGET for _, b in defs) and len(final) <= BUDGET
        assert _equal_at_random_points(_substituted(text), expr, seed=1)


def test_a_text_kept_whole_fits_muparser_when_the_program_negates_it() -> None:
    assert LIMIT + len("-()") < 20000  # muParser 2.3.3: MaxLenExpression = 20000


def test_the_case_values_keep_their_text() -> None:
    assert mu("sin(pi*x)*exp(-t) + x**2") == to_muparser(sp.sin(sp.pi * X) * sp.exp(-T) + X**2)
