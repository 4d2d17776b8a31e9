"""The staged gates: the one function every track's verdicts come from.

F-Exec (did not run, timed out, or wrote invalid artifacts) -> F-Acc (e > tau_acc, or a target
value's relative error above its threshold) -> F-Time (t > tau_time) -> Pass.
"""

from __future__ import annotations

from dataclasses import dataclass

STAGES = ("F-Exec", "F-Acc", "F-Time", "Pass")


@dataclass(frozen=True)
class Gate:
    stage: str
    passed: bool


def gate(executed: bool, error: float | None, tau_acc: float, runtime: float | None, tau_time: float,
         targets_ok: bool = True) -> Gate:
    """``targets_ok``: every target value of the case is within its threshold (no targets: True)."""
    if not executed or error is None:
        return Gate("F-Exec", False)
    if not error <= tau_acc or not targets_ok:
        return Gate("F-Acc", False)
    if runtime is None or not runtime <= tau_time:
        return Gate("F-Time", False)
    return Gate("Pass", True)
