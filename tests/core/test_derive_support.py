"""Compact support (``casekit.derive_support``): a part of a manufactured solution that is zero
outside a ball inside the domain, derived through the PDE into printable data that hide it."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit import derive_support as support
from casekit.derive import derive
from casekit.domains import resolve
from casekit.errors import CasekitError
from casekit.expr import COORDS, parse
from casekit.families import FAMILIES
from casekit.families.calculus import lap
from casekit.model.source import CaseSource

x, y, z = COORDS


def _factor(cx: sp.Rational, cy: sp.Rational, r: sp.Rational) -> sp.Max:
    return sp.Max(0, sp.expand(1 - ((x - cx) ** 2 + (y - cy) ** 2) / r**2))


def _off_sphere(factor: sp.Max, n: int = 300) -> np.ndarray:
    """Points in [-1, 1]^2 away from the sphere where the factor starts (its derivatives jump there)."""
    pts = np.random.default_rng(1).uniform(-1, 1, (n, 2))
    g = sp.lambdify((x, y), support.argument(factor))(pts[:, 0], pts[:, 1])
    return pts[np.abs(g) > 1e-3]


fractions = st.integers(-4, 4).map(lambda k: sp.Rational(k, 10))


@settings(max_examples=12, deadline=None)
@given(cx=fractions, cy=fractions, k=st.integers(3, 5), a=st.integers(-3, 3), b=st.integers(1, 3))
def test_through_equals_the_operator_off_the_sphere(cx, cy, k, a, b):
    """The split form ``outside + max(0, g)**m * inside`` is the operator's value pointwise (sympy's
    own derivative of max, with Heaviside, evaluated off the sphere), has no Heaviside or DiracDelta,
    and carries the factor once."""
    factor = _factor(cx, cy, sp.Rational(1, 2))
    u = x * y + a * x + factor**k * (b + x)
    family = FAMILIES.get("reaction_diffusion")
    params = {"epsilon": sp.Rational(1, 10), "reaction": parse("u**3 - u", params=("u",))}
    split = support.through(family.operator, {"u": u}, params, 2, False)["f"]
    assert not split.has(sp.Heaviside) and not split.has(sp.DiracDelta)
    assert support.factors(split) == {factor}
    direct = family.operator({"u": u}, params, 2, False)["f"]
    pts = _off_sphere(factor)
    fa = sp.lambdify((x, y), split, modules=["numpy", {"Max": np.maximum}])
    pointwise = {"Max": np.maximum, "Heaviside": lambda v, *_: np.heaviside(v, 0.5), "DiracDelta": lambda v, *_: 0 * v}
    fb = sp.lambdify((x, y), direct, modules=["numpy", pointwise])
    va, vb = fa(pts[:, 0], pts[:, 1]), fb(pts[:, 0], pts[:, 1])
    assert np.allclose(va, vb, rtol=1e-9, atol=1e-9 * max(1.0, float(np.max(np.abs(vb)))))


def test_a_power_too_low_for_the_operator_is_refused():
    factor = _factor(0, 0, sp.Rational(1, 2))
    with pytest.raises(support.SupportError, match="too low"):
        support.through(lambda s: lap(lap(s["u"], 2), 2), {"u": factor**3}, )


def test_expand_keeps_the_factor_whole():
    """Derivation multiplies out both parts but never distributes the factor (each term would print it)."""
    factor = _factor(sp.Rational(1, 10), 0, sp.Rational(1, 2))
    e = x**2 + factor * (x + 1) ** 3 + factor**2 * y
    out = support.expand(e, sp.expand)
    assert str(out).count("Max") == 1
    pts = np.random.default_rng(2).uniform(-1, 1, (200, 2))
    fa, fb = (sp.lambdify((x, y), v, modules=["numpy", {"Max": np.maximum}]) for v in (out, e))
    assert np.allclose(fa(pts[:, 0], pts[:, 1]), fb(pts[:, 0], pts[:, 1]), rtol=1e-12, atol=1e-12)


def test_only_ball_factors_inside_the_domain_are_accepted():
    square = resolve("unit_square")
    support.check_inside(_factor(sp.Rational(1, 2), sp.Rational(1, 2), sp.Rational(2, 5)), square)
    with pytest.raises(support.SupportError, match="not inside"):
        support.check_inside(_factor(sp.Rational(1, 2), sp.Rational(1, 2), sp.Rational(1, 2)), square)
    with pytest.raises(support.SupportError, match="not a ball"):
        support.ball(sp.Max(0, 1 - x**2 - 2 * y**2), 2)
    with pytest.raises(support.SupportError, match="one support factor"):
        support.factor_of({"u": _factor(0, 0, 1) + _factor(1, 0, 1)})


def _source(u: str, template: str = "unit_square") -> CaseSource:
    return CaseSource.from_dict({
        "id": "support_probe", "family": "poisson", "domain": {"template": template},
        "pde": {"params": {"kappa": 1.0}}, "manufactured_solution": {"u": u},
        "boundary": {t: "dirichlet" for t in resolve(template).tags()},
        "eval_grid": {"nx": 16, "ny": 16}, "output": {"field": "u"}, "tracks": ["dolfinx"],
    })


def test_derived_data_never_show_the_supported_part():
    """The boundary data are the solution without its supported part, the forcing carries the factor
    once, and a ball that reaches the boundary is a finding on the manufactured solution."""
    u = "x + y**2 + 2*max(0, 1 - ((x - 1/2)**2 + (y - 1/2)**2)/(3/10)**2)**3"
    spec = derive(_source(u)).case_spec()
    for entry in spec["bc"]["dirichlet"]:
        assert "max" not in entry["value"]
    assert spec["pde"]["forcing"]["f"].count("max(") == 1
    with pytest.raises(CasekitError, match="not inside domain 'unit_square'") as caught:
        derive(_source(u.replace("(3/10)", "(1/2)")))
    assert caught.value.pointer == "/manufactured_solution"


def test_a_hostile_power_behind_the_factor_is_refused_before_expanding() -> None:
    """The expansion through the factor is bounded like every derivation's: a forcing that would
    multiply out to millions of terms is one finding on the manufactured solution, not a hang."""
    with pytest.raises(CasekitError, match="too large"):
        derive(_source("max(0, 1 - ((x - 1/2)**2 + (y - 1/2)**2)/(3/10)**2)**3"
                       "*(sin(pi*x) + sin(2*pi*y) + cos(3*pi*x*y) + x**2)**9"))
