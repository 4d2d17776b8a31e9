"""Prompt variants: what a prompt tells the agent about how it is scored.

* ``standard`` (the default, as in the PDEAgent-Bench paper): the staged gates in words -- no
  number of the evaluator's side (thresholds, e_base, t_base) anywhere.
* ``thresholds``: the prompt also states the case's accuracy threshold tau_acc (and each target
  value's), and the runtime rule numerically: every run at most ``alpha_time`` times the runtime of
  the reference solver timed beside it, with the reference's time on the machine that built the
  case for scale.  Rendering it needs the case's record (``casekit prompt --cases BUILD
  --state-thresholds``; the Inspect task's ``state_thresholds``).

Verdicts record the variant their submissions were written from (``prompt_variant``; verdicts
written before variants existed had standard prompts) and ``casekit report`` shows it per system.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from casekit.errors import UnknownName

VARIANTS = ("standard", "thresholds")
DEFAULT = "standard"


def check_variant(name: str) -> str:
    if name not in VARIANTS:
        raise UnknownName(f"unknown prompt variant {name!r}", valid=", ".join(VARIANTS))
    return name


def variant_of(verdict: dict[str, Any]) -> str:
    """The prompt variant a verdict's submission was written from (verdicts older than variants:
    standard, the only prompts there were)."""
    return str(verdict.get("prompt_variant") or DEFAULT)


@dataclass(frozen=True)
class StatedThresholds:
    """The evaluator's numbers a ``thresholds`` prompt states, from a case record."""

    tau_acc: float
    alpha_time: float
    t_base: float
    #: target name -> its threshold (relative error)
    targets: tuple[tuple[str, float], ...] = ()

    @classmethod
    def of_record(cls, record: dict[str, Any]) -> StatedThresholds:
        meta = record["evaluation_metadata"]
        hidden = meta.get("targets") or {}
        names = [e["name"] for e in record["case_spec"].get("targets") or []]
        return cls(float(meta["thresholds"]["tau_acc"]), float(record["evaluation_config"]["alpha_time"]),
                   float(meta["t_base"]), tuple((n, float(hidden[n]["tau"])) for n in names))

    def context(self) -> dict[str, Any]:
        """What the templates print (numbers as text, so every tier writes them alike)."""
        return {"tau_acc": f"{self.tau_acc:.6g}", "alpha_time": f"{self.alpha_time:g}",
                "t_base": f"{self.t_base:.3g}", "targets": [{"name": n, "tau": f"{t:.6g}"} for n, t in self.targets]}
