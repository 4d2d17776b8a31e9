"""The deal.II calibration's forcing split into time modes (``solvers.time_modes``): the program
evaluates each spatial factor once per quadrature point and only the time functions every step, so
the split must reproduce the forcing exactly -- for every separable term, every term that mixes x
and t (left in the rest), and forcings free of t (no split).  Pure Python: no deal.II needed."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.expr import as_expr, exact, to_muparser
from casekit.tracks.dealii.solvers import MAX_TIME_MODES, time_modes

X, Y, T = sp.symbols("x y t")

SPACE = [X, Y, X * Y, sp.sin(sp.pi * X), sp.cos(2 * sp.pi * Y), sp.exp(X / 3), X**3 * Y**2, sp.Integer(1)]
TIME = [sp.Integer(1), sp.exp(-7 * T / 4), sp.sin(sp.pi * T), sp.cos(sp.pi * T), T, T**2]
MIXED = [sp.sin(X - T), sp.exp(-((X - T / 2) ** 2)), sp.cos(sp.pi * (X + Y) * T)]


def _back(text: str) -> sp.Expr:
    """muParser text read back (``^`` is the power; casekit's reader takes both)."""
    return exact(as_expr(text.replace("^", "**"), variables=("x", "y", "z", "t")))


def _rebuilt(split: dict) -> sp.Expr:
    return sp.Add(*(_back(m["time"]) * _back(m["space"]) for m in split["modes"])) + _back(split["rest"])


def _equal(a: sp.Expr, b: sp.Expr) -> bool:
    """Equal at a few points of (x, y, t) to round-off (the symbols are casekit's own)."""
    syms = sorted(a.free_symbols | b.free_symbols, key=str)
    fa, fb = sp.lambdify(syms, a), sp.lambdify(syms, b)
    for k in range(5):
        point = [0.13 + 0.31 * k + 0.07 * i for i in range(len(syms))]
        va, vb = float(fa(*point)), float(fb(*point))
        if abs(va - vb) > 1e-12 * max(1.0, abs(va)):
            return False
    return True


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-9, 9).filter(bool), st.sampled_from(SPACE), st.sampled_from(TIME)),
                min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(-9, 9).filter(bool), st.sampled_from(MIXED)), max_size=2))
def test_the_modes_and_the_rest_add_up_to_the_forcing(separable, mixed) -> None:  # type: ignore[no-untyped-def]
    text = to_muparser(sp.Add(*(c * g * h for c, g, h in separable), *(c * m for c, m in mixed))).replace("^", "**")
    f = _back(text)  # the forcing in casekit's own symbols
    split = time_modes(text)
    if not any(s.name == "t" for s in f.free_symbols):
        assert split is None
        return
    assert split is not None
    assert len(split["modes"]) <= MAX_TIME_MODES
    assert _equal(_rebuilt(split), f)
    for m in split["modes"]:  # every mode's time function is free of x, its factor free of t
        assert {s.name for s in _back(m["time"]).free_symbols} <= {"t"}
        assert "t" not in {s.name for s in _back(m["space"]).free_symbols}


def test_a_manufactured_heat_forcing_splits_into_its_rates() -> None:
    f = "3*x**2*y*exp(-7*t/4) - 2*sin(pi*x)*exp(-7*t/4) + 5*x*exp(-27*t/2) + cos(pi*y)"
    split = time_modes(f)
    assert split is not None
    assert sorted(m["time"] for m in split["modes"]) == sorted(["exp(-7*t/4)", "exp(-27*t/2)", "1"])
    assert split["rest"] == "0"


def test_a_forcing_free_of_t_or_with_nothing_separable_is_not_split() -> None:
    assert time_modes("x*y + sin(pi*x)") is None
    assert time_modes("sin(x - t)") is None  # no separable term
