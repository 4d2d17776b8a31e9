"""The report's figures (PNG): pass rate by family, failure stages, threshold sensitivity.

Every figure is drawn by a function decorated with :class:`figure`: its labels (system names,
families, categories) are data, shown as written, never parsed as mathtext (``a$x^2$b`` is a
name, not a formula).  Legends sit beside the axes, never over the data.
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
from matplotlib import ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from casekit.report import aggregate as agg

STAGE_COLOURS = {"F-Exec": "#d62728", "F-Acc": "#ff7f0e", "F-Time": "#bcbd22", "Pass": "#2ca02c"}


def _plain_text() -> Any:
    """Settings under which no label is parsed as mathtext or TeX."""
    return matplotlib.rc_context({"text.parse_math": False, "text.usetex": False})


class figure:  # a decorator, named as one
    """A figure function: ``draw(*data) -> Figure``, called as ``f(*data, path)`` to save the PNG
    (``f.draw(*data)`` gives the figure, laid out, for tests).  Its labels are plain text: no
    label is parsed as mathtext or TeX."""

    def __init__(self, draw: Callable[..., Figure]) -> None:
        self._draw = draw
        functools.update_wrapper(self, draw)

    def draw(self, *data: Any) -> Figure:
        with _plain_text():
            fig = self._draw(*data)
            fig.canvas.draw()  # lay out now: the artists' extents are those of the saved image
        return fig

    def __call__(self, *args: Any) -> Path:
        *data, path = args
        with _plain_text():
            return _save(self._draw(*data), path)


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight", dpi=110)
    plt.close(fig)
    return path


def _legend(ax: Axes) -> None:
    """The legend beside the axes, never over the data (full bars reach the top)."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


#: percentages drawn from a little below zero, so a 0 % bar's edge or curve is not hidden by the axis
PERCENT_LIMITS = (-3.0, 108.0)


@figure
def pass_by_family(by_system: dict[str, list[dict[str, Any]]]) -> Figure:
    """Bars per family and system, each labelled with its value: a system at 0 % shows a line in
    its colour at zero and the label 0, never an absent bar."""
    families = sorted({v["family"] for vs in by_system.values() for v in vs})
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(families) + 2), 4))
    width = 0.8 / max(len(by_system), 1)
    x = np.arange(len(families))
    # values written upright above the bars while a bar is wide enough for "100", else turned (and
    # then given the headroom of a turned "100" above the top of the axis)
    bar_inches = ax.get_position().width * fig.get_figwidth() / max(len(families), 1) * width
    turned = bar_inches < 0.2
    for i, (system, vs) in enumerate(by_system.items()):
        groups = agg.group(vs, "family")
        values = [100 * agg.rates(groups[f]).pass_rate if f in groups else None for f in families]
        colour = f"C{i % 10}"
        bars = ax.bar(x + i * width - 0.4 + width / 2, [v or 0.0 for v in values], width, label=system,
                      color=colour, edgecolor=colour, linewidth=1.5)
        for bar, v in zip(bars, values, strict=True):
            bar.set_visible(v is not None)  # a family the system has no verdict in: no bar (the tables: "-")
        ax.bar_label(bars, labels=["" if v is None else f"{v:.0f}" for v in values], padding=2, fontsize=7,
                     rotation=90 if turned else 0)
    ax.set_xticks(x, families, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("pass rate [%]")
    ax.set_ylim(PERCENT_LIMITS[0], PERCENT_LIMITS[1] + (10.0 if turned else 0.0))
    ax.set_yticks(range(0, 101, 20))
    ax.set_title("Pass rate by PDE family (first attempts)")
    _legend(ax)
    return fig


@figure
def failure_stages(by_system: dict[str, list[dict[str, Any]]]) -> Figure:
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(by_system) + 2), 4))
    bottom = np.zeros(len(by_system))
    names = list(by_system)
    for stage in ("F-Exec", "F-Acc", "F-Time", "Pass"):
        values = np.array([100 * agg.rates(vs).stages[stage] / max(len(vs), 1) for vs in by_system.values()])
        ax.bar(names, values, bottom=bottom, color=STAGE_COLOURS[stage], label=stage)
        bottom += values
    ax.set_ylabel("share of cases [%]")
    ax.set_title("Outcome by stage")
    _legend(ax)
    ax.tick_params(axis="x", labelsize=8)
    return fig


@figure
def sensitivity(by_system: dict[str, list[dict[str, Any]]], which: str) -> Figure:
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, (system, vs) in enumerate(by_system.items()):
        curve = agg.sensitivity(vs)[which]
        # each later system drawn smaller: systems with the same curve (two at 0 %) stay visible, nested
        ax.plot(list(curve), [100 * v for v in curve.values()], marker="o", label=system,
                markersize=max(9.0 - 2.0 * i, 3.0), linewidth=max(2.5 - 0.5 * i, 1.0))
    calibrated = {v["calibration"][which] for vs in by_system.values() for v in vs}
    for a in sorted(calibrated):  # the alpha the verdicts were gated with
        ax.axvline(a, ls="--", color="grey", lw=1)
        ax.annotate(f"calibrated {a:g}", (a, 3), fontsize=7, color="grey", rotation=90, ha="right")
    if which == "alpha_acc":
        ax.set_xscale("log")
        # ticks at the alphas, written plainly (the log axis' own labels are mathtext, shown raw here)
        ax.xaxis.set_major_locator(ticker.FixedLocator(agg.ALPHA_ACC))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda a, _: f"{a:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("alpha_acc" if which == "alpha_acc" else "alpha_time (gate: t / t_calibration, paired)")
    ax.set_ylabel("pass rate [%]")
    ax.set_ylim(*PERCENT_LIMITS)
    ax.set_title(f"Sensitivity of the pass rate to {which}")
    _legend(ax)
    return fig
