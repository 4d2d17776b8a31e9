"""The span check's oracle fit bounds an attacker who fits the components of a vector unknown and
reports their magnitude: a magnitude is not linear in the components, so fitting the magnitude
alone proved nothing about that attacker (span_fit came to 3.05 tau_acc of 3-D Stokes magnitudes
the magnitude fit kept 8.06 tau_acc away)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from casekit.solvers.baselines.visible import Field
from casekit.validate.span import _fit_one

POINTS = np.random.default_rng(0).uniform(-1.0, 1.0, size=(200, 3))
SHAPES = [lambda p: np.ones(len(p)), lambda p: p[:, 0], lambda p: np.sin(3 * p[:, 1]), lambda p: p[:, 2] ** 2,
          lambda p: np.cos(p[:, 0] * p[:, 1])]
DICTIONARY = [Field(f"f{i}", f) for i, f in enumerate(SHAPES)]
BASIS = np.column_stack([f.values(POINTS) for f in DICTIONARY])


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, (len(SHAPES), 3), elements=st.floats(-3, 3)).filter(lambda c: np.abs(c).sum() > 0.5))
def test_components_in_a_span_make_their_magnitude_answerable(coefficients: np.ndarray) -> None:
    vector = BASIS @ coefficients
    magnitude = np.linalg.norm(vector, axis=1)[:, None]
    alone = _fit_one("s", DICTIONARY, POINTS, magnitude)
    both = _fit_one("s", DICTIONARY, POINTS, magnitude, vector)
    assert both.residual <= alone.residual + 1e-12
    assert both.residual < 1e-8, both  # the components are in the span: the oracle must say so
    if alone.residual > 1e-6:  # the magnitude itself outside the span: the components' fit is what found it
        assert both.span == "s (per component)"


def test_components_outside_the_span_leave_the_magnitude_fit_as_it_was() -> None:
    vector = np.column_stack([np.exp(POINTS[:, 0] * POINTS[:, 2]), np.tanh(4 * POINTS[:, 1]), POINTS[:, 0] ** 5])
    magnitude = np.linalg.norm(vector, axis=1)[:, None]
    alone = _fit_one("s", DICTIONARY, POINTS, magnitude)
    both = _fit_one("s", DICTIONARY, POINTS, magnitude, vector)
    assert both.residual <= alone.residual
    assert both.residual > 1e-3
