"""Case-source YAML past Python's limits is a one-line error, never a traceback (issue 27)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit import yamlio
from casekit.errors import CasekitError


@settings(max_examples=20, deadline=None)
@given(digits=st.integers(4301, 20_000))
def test_an_integer_too_long_to_read_is_a_clear_error(digits: int) -> None:
    with pytest.raises(CasekitError, match="a number too long to read"):
        yamlio.loads(f"id: x\nn: {'9' * digits}\n", file="case.yaml")
