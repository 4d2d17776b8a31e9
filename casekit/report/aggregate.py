"""Aggregations of verdicts (the paper's tables), all recomputable without re-running anything."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from casekit.scoring.gates import STAGES, gate
from casekit.thresholds import tau_time, thresholds

ALPHA_ACC = (2.0, 5.0, 10.0, 50.0, 100.0)
ALPHA_TIME = (1.0, 2.0, 3.0, 5.0)


@dataclass(frozen=True)
class Rates:
    n: int
    exec_rate: float  # executed / all
    acc_rate: float  # accurate / executed
    time_rate: float  # fast enough / accurate
    pass_rate: float  # passed / all
    stages: dict[str, int]


def rates(verdicts: Iterable[dict[str, Any]]) -> Rates:
    vs = list(verdicts)
    stages = dict.fromkeys(STAGES, 0)
    for v in vs:
        stages[v["stage"]] += 1
    n = len(vs)
    executed = n - stages["F-Exec"]
    accurate = executed - stages["F-Acc"]
    passed = stages["Pass"]
    div = lambda a, b: a / b if b else 0.0  # noqa: E731
    return Rates(n, div(executed, n), div(accurate, executed), div(passed, accurate), div(passed, n), stages)


def first_attempts(verdicts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in verdicts if v["attempt"] == 1]


def group(verdicts: Iterable[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    """Verdicts by system and a key (track, family, math_type, domain)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for v in verdicts:
        values = v.get(key) if key != "math_type" else v.get("math_type") or []
        for value in values if isinstance(values, list) else [values]:
            out[str(value)].append(v)
    return dict(sorted(out.items()))


def systems(verdicts: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return group(verdicts, "system")


def regate(v: dict[str, Any], alpha_acc: float | None = None, alpha_time: float | None = None) -> str:
    """The stage this verdict would get with other alphas (from its stored error and runtime)."""
    if v["stage"] == "F-Exec":
        return "F-Exec"
    cal = v["calibration"]
    config = {"alpha_acc": alpha_acc or cal["alpha_acc"], "alpha_time": alpha_time or cal["alpha_time"],
              "tau_min": cal["tau_min"]}
    # the runtime gate against what the verdict was timed against (paired: the calibration re-timed
    # beside it, so this is the ratio t / t_calibration against alpha_time; older verdicts: t_base)
    t_reference = (v.get("timing") or {}).get("t_reference") or cal["t_base"]
    tau = thresholds(config, cal["e_base"], cal["t_base"])
    runtime = (v["runtime"].get("max") or v["runtime"]["median"]) if v["runtime"] else None
    return gate(True, v["error"], tau["tau_acc"], runtime, tau_time(config, t_reference)).stage


def sensitivity(verdicts: list[dict[str, Any]]) -> dict[str, dict[float, float]]:
    """Pass rate as alpha_acc varies (alpha_time fixed) and as alpha_time varies (alpha_acc fixed)."""
    n = len(verdicts) or 1
    return {
        "alpha_acc": {a: sum(regate(v, alpha_acc=a) == "Pass" for v in verdicts) / n for a in ALPHA_ACC},
        "alpha_time": {a: sum(regate(v, alpha_time=a) == "Pass" for v in verdicts) / n for a in ALPHA_TIME},
    }


def pass_at_k(verdicts: list[dict[str, Any]]) -> dict[int, float]:
    """Fraction of cases passed within the first k attempts (best-of-attempts is the largest k)."""
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for v in verdicts:
        by_case[v["case_id"]].append(v)
    kmax = max((v["attempt"] for v in verdicts), default=0)
    out = {}
    for k in range(1, kmax + 1):
        out[k] = sum(any(v["passed"] for v in vs if v["attempt"] <= k) for vs in by_case.values()) / max(
            len(by_case), 1)
    return out
