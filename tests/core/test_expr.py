"""The expression parser and printers: round trips, robustness, hostile input."""

from __future__ import annotations

import builtins
import math
import string

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from casekit.expr import (
    MAX_LENGTH,
    ExpressionError,
    X,
    Y,
    parse,
    to_cpp,
    to_muparser,
    to_numpy,
    to_text,
    to_ufl_source,
)

T = sp.Symbol("t", real=True)
ATOMS = st.sampled_from([X, Y, T, sp.pi, sp.Integer(2), sp.Integer(3), sp.Rational(1, 3), sp.Float(0.25),
                         sp.Float(1.5e-3), sp.Integer(-1)])
UNARY = [sp.sin, sp.cos, sp.exp, sp.tanh, sp.atan, lambda a: sp.sqrt(a**2 + 1), lambda a: sp.log(a**2 + 1),
         sp.Abs]


def _exprs() -> st.SearchStrategy:
    return st.recursive(
        ATOMS,
        lambda inner: st.one_of(
            st.tuples(inner, inner).map(lambda p: p[0] + p[1]),
            st.tuples(inner, inner).map(lambda p: p[0] * p[1]),
            st.tuples(inner, st.integers(1, 4)).map(lambda p: p[0] ** p[1]),
            st.tuples(st.sampled_from(UNARY), inner).map(lambda p: p[0](p[1])),
            st.tuples(inner, inner).map(lambda p: sp.Max(p[0], p[1])),
        ),
        max_leaves=12,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_exprs())
def test_parse_print_round_trip(e: sp.Expr) -> None:
    """Every parsed expression prints and parses back to the identical tree; any tree prints to
    text that parses to the same value."""
    if e.has(sp.zoo, sp.nan, sp.oo, sp.I):
        return
    # the parser refuses exponents above 32 on non-constant bases (with a clear error); sympy
    # builds them from nested powers such as (x**4 * x**5)**4
    assume(all(abs(p.exp) <= 32 for p in e.atoms(sp.Pow) if p.exp.is_Number and not p.base.is_Number))
    try:
        e0 = parse(to_text(e))
    except ExpressionError as exc:  # and exponential towers (exp(exp(exp(x)))), also with a clear error
        assume("nest more than" not in str(exc))
        raise
    assert parse(to_text(e0)) == e0
    pts = {X: sp.Rational(3, 7), Y: sp.Rational(-2, 5), T: sp.Rational(1, 3)}
    va, vb = e.subs(pts).evalf(30), e0.subs(pts).evalf(30)
    assume(all(abs(v) < 1e300 for v in (va, vb) if v.is_finite))  # beyond what a float holds
    a, b = complex(va), complex(vb)
    assert abs(a - b) <= 1e-9 * max(1.0, abs(a))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=string.printable, max_size=80))
def test_no_input_crashes(text: str) -> None:
    try:
        result = parse(text)
    except ExpressionError as exc:
        assert str(exc)
    else:
        assert isinstance(result, sp.Basic)


TOKENS = ["x", "y", "t", "pi", "sin", "(", ")", "**", "*", "/", "+", "-", ",", "2", "0.5", "1e3", "exp", "abs",
          "max", "atan2", " "]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=30))
def test_token_soup_only_clear_errors(tokens: list[str]) -> None:
    try:
        parse("".join(tokens))
    except ExpressionError:
        pass


HOSTILE = [
    "__import__('os').system('touch /tmp/casekit-pwned')",
    "exec('import os')",
    "eval('1')",
    "x.__class__.__mro__",
    "(lambda: 1)()",
    "[c for c in ().__class__.__bases__]",
    "open('/etc/passwd').read()",
    "os.system('id')",
    "globals()",
    "x; import os",
    "sin.__globals__",
    "9**9**9**9",
    "1e999999",
    "(" * 500 + "x" + ")" * 500,
    "x" + "+x" * 20000,
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_never_execute(text: str, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the parser must never call eval/exec")

    monkeypatch.setattr(builtins, "eval", refuse)
    monkeypatch.setattr(builtins, "exec", refuse)
    with pytest.raises(ExpressionError):
        parse(text)


def test_errors_name_the_offending_token() -> None:
    with pytest.raises(ExpressionError, match=r"unknown name 'q' at column 5") as err:
        parse("x + q")
    assert "x, y, z, t" in (err.value.valid or "")
    with pytest.raises(ExpressionError, match=r"unknown function 'foo' at column 1"):
        parse("foo(x)")
    with pytest.raises(ExpressionError, match=r"'\^' at column 2: use \*\* for powers"):
        parse("x^2")
    with pytest.raises(ExpressionError, match="attribute access"):
        parse("x.real")
    with pytest.raises(ExpressionError, match="too long"):
        parse("x" * (MAX_LENGTH + 1))
    with pytest.raises(ExpressionError, match="division by zero"):
        parse("1/(x-x)")


def test_variables_and_parameters_are_restricted() -> None:
    with pytest.raises(ExpressionError, match="unknown name 'z'"):
        parse("x + z", variables=("x", "y"))
    e = parse("u**3 - u", variables=("x", "y"), params=("u",))
    assert e.free_symbols == {sp.Symbol("u", real=True)}
    with pytest.raises(ExpressionError, match="reserved"):
        parse("x", params=("sin",))


def test_numpy_printer_is_vectorised_and_broadcasts_constants() -> None:
    pts = np.array([[0.0, 0.0], [0.5, 0.25], [1.0, 1.0]])
    f = to_numpy(parse("sin(pi*x)*exp(y) + t"), 2)
    assert np.allclose(f(pts, t=2.0), np.sin(np.pi * pts[:, 0]) * np.exp(pts[:, 1]) + 2.0)
    assert to_numpy(parse("3"), 2)(pts).shape == (3,)


@settings(max_examples=60, deadline=None)
@given(_exprs(), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_printers_agree_numerically(e: sp.Expr, x: float, y: float, t: float) -> None:
    if e.has(sp.zoo, sp.nan, sp.oo, sp.I):
        return
    with np.errstate(all="ignore"):
        expected = float(e.subs({X: x, Y: y, T: t}).evalf())
        got = float(to_numpy(e, 2)(np.array([[x, y]]), t=t)[0])
    if not math.isfinite(expected) or abs(expected) > 1e12:
        return
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
    ns = {"ufl": _FakeUfl(), "x": [x, y], "t": t, "abs": abs}
    assert _eval_generated(to_ufl_source(e), ns) == pytest.approx(expected, rel=1e-9, abs=1e-9)


class _FakeUfl:
    """Stands in for the ufl module when checking UFL-style source numerically."""

    pi = math.pi
    sin, cos, tan, exp, tanh, atan, sqrt, log = (math.sin, math.cos, math.tan, math.exp, math.tanh, math.atan,
                                                 math.sqrt, math.log)
    asin, acos, sinh, cosh, atan2 = math.asin, math.acos, math.sinh, math.cosh, math.atan2

    @staticmethod
    def max_value(a, b):
        return max(a, b)

    @staticmethod
    def min_value(a, b):
        return min(a, b)

    @staticmethod
    def sign(a):
        return math.copysign(1.0, a) if a else 0.0


def _eval_generated(source: str, namespace: dict) -> float:
    # the test evaluates code casekit *generated* from a trusted tree, never user input
    return float(builtins.eval(source, {"__builtins__": {}}, namespace))


def test_cpp_and_muparser_printers() -> None:
    e = parse("2*pi*sin(pi*x)*exp(-t) + abs(y)**0.5 + log(1 + x**2)")
    cpp = to_cpp(e)
    assert "std::sin(M_PI*p[0])" in cpp and "std::exp(-t)" in cpp
    mu = to_muparser(e)
    assert "ln(" in mu and "**" not in mu


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_exprs())
def test_the_tree_walk_agrees_with_lambdify_on_expressions_and_their_derivatives(e: sp.Expr) -> None:
    """to_numpy walks trees of whitelisted heads instead of compiling them; what differentiation
    makes of them (sign, sec, Heaviside, ...) is either walked the same way or compiled."""
    pts = np.array([[0.1, 0.7], [0.45, 0.3], [0.9, 0.95]])
    for f in (e, sp.diff(e, X)):
        if f.has(sp.zoo, sp.nan, sp.oo, sp.I):
            continue
        with np.errstate(all="ignore"):
            try:  # lambdify cannot vectorise every piecewise derivative of Max (nor nested Max)
                reference = np.broadcast_to(np.asarray(
                    sp.lambdify([X, Y, T], f, modules="numpy")(pts[:, 0], pts[:, 1], 0.3), dtype=float), (3,))
            except (ValueError, TypeError):
                continue
            got = to_numpy(f, 2)(pts, t=0.3)
        assert np.allclose(got, reference, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_an_unknown_head_is_compiled_not_walked() -> None:
    from casekit.expr import numeric

    e = sp.Heaviside(X - sp.Rational(1, 2)) + Y
    assert not numeric.supported(e)
    got = to_numpy(e, 2)(np.array([[0.25, 1.0], [0.75, 1.0]]))
    assert np.allclose(got, [1.0, 2.0])


# -- the syntax tree (what solvers evaluate, without sympy) ---------------------------------
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_exprs())
def test_the_syntax_tree_evaluates_as_the_sympy_tree_of_the_same_text(e: sp.Expr) -> None:
    """A calibration solver evaluates the text as written (casekit.expr.tree, numpy) and as UFL
    (casekit.solvers.ufl_expr); both must agree with the sympy tree that derivation and
    validation read from the same text."""
    from casekit.expr.syntax import parse_tree
    from casekit.expr.tree import points_function

    if e.has(sp.zoo, sp.nan, sp.oo, sp.I):
        return
    assume(all(abs(p.exp) <= 32 for p in e.atoms(sp.Pow) if p.exp.is_Number and not p.base.is_Number))
    text = to_text(e)
    pts = np.array([[0.1, 0.7], [0.45, 0.3], [0.9, 0.95]])
    with np.errstate(all="ignore"):
        expected = to_numpy(parse(text), 2)(pts, t=0.3)
        got = points_function(text, 2)(pts, t=0.3)
    finite = np.isfinite(expected) & (np.abs(expected) < 1e12)
    assert np.allclose(got[finite], expected[finite], rtol=1e-11, atol=1e-11)
    tree = parse_tree(text)
    for i, (x, y) in enumerate(pts):
        if finite[i]:
            assert _ufl_value(tree, x, y, 0.3) == pytest.approx(expected[i], rel=1e-9, abs=1e-9)


def _ufl_value(tree, x: float, y: float, t: float) -> float:
    """casekit.solvers.ufl_expr.to_ufl with numbers for x, y, t (UFL itself is not needed to
    check the walk: its operators are the ones a float has)."""
    import importlib
    import sys
    import types

    fake = types.ModuleType("ufl")
    for name in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "sqrt", "atan2"):
        setattr(fake, name, getattr(math, name))
    fake.ln, fake.pi = math.log, math.pi
    fake.sign = _FakeUfl.sign
    fake.max_value, fake.min_value = _FakeUfl.max_value, _FakeUfl.min_value
    saved = sys.modules.get("ufl")
    sys.modules["ufl"] = fake
    try:
        sys.modules.pop("casekit.solvers.ufl_expr", None)
        module = importlib.import_module("casekit.solvers.ufl_expr")
        with np.errstate(all="ignore"):
            return float(module.to_ufl(tree, [x, y], t))
    finally:
        sys.modules.pop("casekit.solvers.ufl_expr", None)
        if saved is not None:
            sys.modules["ufl"] = saved
        else:
            sys.modules.pop("ufl", None)


def test_a_sum_of_thousands_of_terms_is_parsed_and_evaluated_without_recursion() -> None:
    from casekit.expr.tree import points_function

    text = " + ".join(f"{i}*x*y" for i in range(1, 660))  # 3953 tokens: the most allowed is 4000
    assert parse(text) == sp.Integer(sum(range(1, 660))) * X * Y
    assert points_function(text, 2)(np.array([[1.0, 2.0]]))[0] == pytest.approx(2 * sum(range(1, 660)))


def test_solver_runtime_modules_import_without_sympy_or_jsonschema() -> None:
    """What every sandboxed calibration solve imports (expressions, domains and their masks,
    output artifacts, the baselines) loads neither sympy nor jsonschema: each would cost every
    run a tenth to a third of a second before the solve."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from casekit.expr.syntax import parse_tree\n"
            "from casekit.expr.tree import points_function\n"
            "from casekit.solvers import artifacts, baselines\n"
            "from casekit.domains import resolve\n"
            "from casekit.domains.meshing import MeshOptions\n"
            "import casekit.domains.templates\n"
            "for name in ('annulus', 'star', 'l_shape', 'unit_cube'):\n"
            "    d = resolve(name, {}, validated=True)\n"
            "    d.inside(__import__('numpy').zeros((4, d.dim)))\n"
            "print(sorted(m for m in ('sympy', 'jsonschema') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
