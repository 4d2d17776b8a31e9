"""The report's figures (PNG): pass rate by family, failure stages, threshold sensitivity.

Every figure is drawn by a function decorated with :func:`figure`: its labels (system names,
families, categories) are data, shown as written, never parsed as mathtext (``a$x^2$b`` is a
name, not a formula).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from casekit.report import aggregate as agg

STAGE_COLOURS = {"F-Exec": "#d62728", "F-Acc": "#ff7f0e", "F-Time": "#bcbd22", "Pass": "#2ca02c"}


def figure(draw: Callable[..., Path]) -> Callable[..., Path]:
    """A figure function, made and saved with plain text: no label is parsed as mathtext or TeX."""
    @functools.wraps(draw)
    def plain(*args: Any, **kwargs: Any) -> Path:
        with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
            return draw(*args, **kwargs)
    return plain


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight", dpi=110)
    plt.close(fig)
    return path


@figure
def pass_by_family(by_system: dict[str, list[dict[str, Any]]], path: Path) -> Path:
    families = sorted({v["family"] for vs in by_system.values() for v in vs})
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(families) + 2), 4))
    width = 0.8 / max(len(by_system), 1)
    x = np.arange(len(families))
    for i, (system, vs) in enumerate(by_system.items()):
        groups = agg.group(vs, "family")
        values = [100 * agg.rates(groups.get(f, [])).pass_rate for f in families]
        ax.bar(x + i * width - 0.4 + width / 2, values, width, label=system)
    ax.set_xticks(x, families, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("pass rate [%]")
    ax.set_ylim(0, 105)
    ax.set_title("Pass rate by PDE family (first attempts)")
    ax.legend(fontsize=8)
    return _save(fig, path)


@figure
def failure_stages(by_system: dict[str, list[dict[str, Any]]], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(by_system) + 2), 4))
    bottom = np.zeros(len(by_system))
    names = list(by_system)
    for stage in ("F-Exec", "F-Acc", "F-Time", "Pass"):
        values = np.array([100 * agg.rates(vs).stages[stage] / max(len(vs), 1) for vs in by_system.values()])
        ax.bar(names, values, bottom=bottom, color=STAGE_COLOURS[stage], label=stage)
        bottom += values
    ax.set_ylabel("share of cases [%]")
    ax.set_title("Outcome by stage")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.tick_params(axis="x", labelsize=8)
    return _save(fig, path)


@figure
def sensitivity(by_system: dict[str, list[dict[str, Any]]], which: str, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for system, vs in by_system.items():
        curve = agg.sensitivity(vs)[which]
        ax.plot(list(curve), [100 * v for v in curve.values()], marker="o", label=system)
    calibrated = {v["calibration"][which] for vs in by_system.values() for v in vs}
    for a in sorted(calibrated):  # the alpha the verdicts were gated with
        ax.axvline(a, ls="--", color="grey", lw=1)
        ax.annotate(f"calibrated {a:g}", (a, 3), fontsize=7, color="grey", rotation=90, ha="right")
    if which == "alpha_acc":
        ax.set_xscale("log")
    ax.set_xlabel("alpha_acc" if which == "alpha_acc" else "alpha_time (gate: t / t_calibration, paired)")
    ax.set_ylabel("pass rate [%]")
    ax.set_ylim(0, 105)
    ax.set_title(f"Sensitivity of the pass rate to {which}")
    ax.legend(fontsize=8)
    return _save(fig, path)
