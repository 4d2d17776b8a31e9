"""The one place thresholds are defined and computed.

tau_acc = max(alpha_acc * e_base, tau_min) (for the field, and for each target value with the
calibration's relative error of that value as its e_base) and tau_time = alpha_time * t_reference, with the keys
and ranges of ``schemas/defs.schema.json#/$defs/evaluation_config`` and these defaults (the
paper's).  At build time t_reference is the calibration's t_base; at evaluation it is, by default,
the calibration solver re-timed on the evaluating machine next to the submissions (paired
timing), so the runtime gate is the ratio t_submission / t_calibration <= alpha_time, taken
round by round (:func:`runtime_ratio`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from casekit.errors import CasekitError

DEFAULTS: dict[str, Any] = {
    "target_metric": "rel_l2_grid",
    "timeout_sec": 300.0,
    "alpha_acc": 10.0,
    "alpha_time": 3.0,
    "tau_min": 1e-6,
}

#: sanity ranges of calibration results; outside them a case is rejected, never patched
E_BASE_RANGE = (0.0, 0.05)
T_BASE_RANGE = (1e-4, 3600.0)


def evaluation_config(given: dict[str, Any] | None) -> dict[str, Any]:
    """The complete evaluation config: the given keys over the defaults, in schema order."""
    given = given or {}
    return {k: given.get(k, v) for k, v in DEFAULTS.items()}


def thresholds(config: dict[str, Any], e_base: float, t_base: float) -> dict[str, float]:
    """tau_acc and tau_time from an evaluation config and the calibration's e_base, t_base."""
    _sane("e_base", e_base, E_BASE_RANGE)
    _sane("t_base", t_base, T_BASE_RANGE)
    return {"tau_acc": tau_acc(config, e_base), "tau_time": tau_time(config, t_base)}


def target_thresholds(config: dict[str, Any], e_base: dict[str, float], field_tau: float) -> dict[str, float]:
    """The threshold of each target value (its relative error): the accuracy gate's rule and
    sanity range applied to the calibration's relative error of that value, and never below the
    field's own threshold ``field_tau``.  Functionals such as a mean superconverge (a P2
    calibration's mean is often exact to 1e-9 while its field error is 1e-5): without the field
    floor the gate would sit at tau_min and fail sound lower-order solvers whose field passes."""
    for name, e in e_base.items():
        _sane(f"the calibration's relative error of target {name!r}", e, E_BASE_RANGE)
    return {name: max(tau_acc(config, e), field_tau) for name, e in e_base.items()}


def tau_acc(config: dict[str, Any], e_base: float) -> float:
    """max(alpha_acc * e_base, tau_min): the accuracy threshold of the field and of each target."""
    return max(float(config["alpha_acc"]) * e_base, float(config["tau_min"]))


def _sane(name: str, value: Any, bounds: tuple[float, float]) -> None:
    lo, hi = bounds
    if not (isinstance(value, (int, float)) and math.isfinite(value) and lo <= value <= hi):
        raise CasekitError(f"{name} = {value!r} is outside its sanity range",
                           valid=f"a finite number in [{lo:g}, {hi:g}]")


def runtime_ratio(runs: Sequence[float], reference_runs: Sequence[float], t_reference: float) -> float:
    """The ratio the runtime gate compares with ``alpha_time``.  Paired timing (a calibration run
    in every round, just before the submission's run of that round): the largest of the rounds'
    ratios ``t_r / c_r`` -- every run must be fast against the calibration run timed beside it, so
    load that comes and goes hits both sides of each ratio.  Without per-round reference runs
    (the build's t_base, a timing file): the slowest run over ``t_reference``."""
    if not runs:
        raise ValueError("a runtime ratio needs at least one run")
    if len(reference_runs) >= len(runs) and all(c > 0 for c in reference_runs[:len(runs)]):
        return max(t / c for t, c in zip(runs, reference_runs, strict=False))
    return max(runs) / t_reference


def tau_time(config: dict[str, Any], t_reference: float) -> float:
    """The runtime threshold against a reference time (the build's t_base or a paired re-timing)."""
    return float(config["alpha_time"]) * float(t_reference)
