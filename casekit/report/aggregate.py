"""Aggregations of verdicts (the paper's tables), all recomputable without re-running anything."""

from __future__ import annotations

import math
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


@dataclass(frozen=True)
class Cell:
    """k of n, with the Wilson score 95 % interval of the rate (n = 0: no data, not 0 %)."""

    k: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.k, self.n) if self.n else None

    def text(self) -> str:
        if not self.n:
            return "-"
        lo, hi = wilson(self.k, self.n)
        return f"{100 * self.k / self.n:.1f}% [{100 * lo:.0f}-{100 * hi:.0f}] ({self.k}/{self.n})"

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "n": self.n, "rate": self.rate, "ci95": list(self.interval) if self.interval else None}


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion k/n (95 % by default)."""
    if n <= 0:
        raise ValueError("an interval needs at least one trial")
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # the interval holds k/n exactly (at k = 0 and k = n round-off would push the bound past it)
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def side_by_side(verdicts: Iterable[dict[str, Any]], key: str | None
                 ) -> tuple[list[str], list[tuple[str, list[Cell]]]]:
    """Pass rates with rows = the values of ``key`` (one row "all" without a key) and columns =
    systems: (systems, [(row, [Cell per system])])."""
    vs = list(verdicts)
    names = sorted({v["system"] for v in vs})
    groups = group(vs, key) if key else {"all": vs}
    rows = []
    for value, members in groups.items():
        per = systems(members)
        rows.append((value, [Cell(sum(v["passed"] for v in per.get(s, [])), len(per.get(s, []))) for s in names]))
    return names, rows


def failure_categories(by_system: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, int]]:
    """How many verdicts of each system failed for each reason (category) -- passes excluded."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(by_system, 0))
    for system, vs in by_system.items():
        for v in vs:
            if not v["passed"]:
                out[(v.get("failure") or {}).get("category") or v["stage"]][system] += 1
    return dict(sorted(out.items()))


def prompt_variants(verdicts: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """The prompt variants each system's submissions were written from (casekit.prompts.variants)."""
    from casekit.prompts.variants import variant_of

    out: dict[str, set[str]] = defaultdict(set)
    for v in verdicts:
        out[v["system"]].add(variant_of(v))
    return {s: sorted(vs) for s, vs in sorted(out.items())}


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
    ratio = (v.get("timing") or {}).get("ratio")
    if ratio is not None:  # the gate's own ratio (paired round by round)
        runtime = ratio * t_reference
    else:
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


def geometric_mean(values: Iterable[float]) -> float | None:
    """exp(mean(log x)) of the positive values (CodePDE aggregates nRMSE so); None without any.
    An exact zero error counts as the smallest positive double, so one perfect case cannot make
    the mean 0."""
    logs = [math.log(max(x, 5e-324)) for x in values if x is not None and math.isfinite(x) and x >= 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


def error_summary(verdicts: Iterable[dict[str, Any]], key: str | None) -> dict[str, dict[str, dict[str, Any]]]:
    """Per group of ``key`` (one group "all" without a key) and system: the geometric mean of the
    error (casekit's error is CodePDE's nRMSE, ||u - u_ref||_2 / ||u_ref||_2 on the grid) over the
    verdicts that have one, their count, and the median observed self-convergence order."""
    groups = group(verdicts, key) if key else {"all": list(verdicts)}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for g, vs in groups.items():
        out[g] = {}
        for system, svs in systems(vs).items():
            errors = [v["error"] for v in svs if v.get("error") is not None]
            orders = sorted(o for v in svs if (o := (v.get("convergence") or {}).get("observed_order")) is not None)
            out[g][system] = {"n": len(errors), "nrmse_geomean": geometric_mean(errors),
                              "n_order": len(orders), "order_median": _median(orders)}
    return out


def _median(xs: list[float]) -> float | None:
    """The median of sorted finite values (halves summed: two errors near the largest double
    have a finite mean)."""
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else xs[m - 1] / 2 + xs[m] / 2


def target_summary(verdicts: Iterable[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per kind of target value (FEABench's quantities of interest) and system: how many were
    asked, how many passed their gate, and the median relative error of those scored."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for v in verdicts:
        for t in v.get("targets") or []:
            cell = out.setdefault(t["kind"], {}).setdefault(v["system"], {"n": 0, "passed": 0, "errors": []})
            cell["n"] += 1
            cell["passed"] += bool(t["passed"])
            if t.get("error") is not None:
                cell["errors"].append(float(t["error"]))
    for cells in out.values():
        for cell in cells.values():
            cell["error_median"] = _median(sorted(cell.pop("errors")))
    return out
