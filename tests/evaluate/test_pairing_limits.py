"""The paired calibration run's limits: casekit's own solver is not timed out by a busy machine."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.evaluate.pairing import CALIBRATION_TIMEOUT_FACTOR, calibration_limits
from casekit.runner.limits import Limits


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=1.0, max_value=3600.0), st.one_of(st.none(), st.floats(min_value=0.0, max_value=600.0)))
def test_a_calibration_run_gets_the_case_limits_or_more_time(timeout: float, t_base: float | None) -> None:
    """Never less than the case's timeout, 20 x its build-time t_base where that is longer, every
    other limit (memory, processes) the case's."""
    limits = Limits(timeout_sec=timeout, memory_mb=2048)
    record = {"evaluation_metadata": {"t_base": t_base}}
    out = calibration_limits(limits, record)
    assert out.timeout_sec == max(timeout, CALIBRATION_TIMEOUT_FACTOR * (t_base or 0.0))
    assert out.memory_mb == 2048 and out.nproc == limits.nproc
    assert out.cpu >= limits.cpu
