"""The report's figures as drawn (their artists and extents, not their pixels): legends beside the
data, a 0 % system visible with its value, a missing group left empty, plain tick labels."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from casekit.report import aggregate as agg
from casekit.report import plots
from tests.report.test_report import verdict


def _by_system() -> dict[str, list[dict[str, Any]]]:
    """agent passes everything, zero nothing; zero never tried stokes."""
    vs = [verdict("agent", i, "Pass", family=f) for i, f in enumerate(("poisson", "heat", "stokes"))]
    vs += [verdict("zero", i, "F-Acc", family=f) for i, f in enumerate(("poisson", "heat"))]
    return agg.systems(vs)


def _drawn(name: str) -> Figure:
    by_system = _by_system()
    return {"pass_by_family": lambda: plots.pass_by_family.draw(by_system),
            "failure_stages": lambda: plots.failure_stages.draw(by_system),
            "alpha_acc": lambda: plots.sensitivity.draw(by_system, "alpha_acc"),
            "alpha_time": lambda: plots.sensitivity.draw(by_system, "alpha_time")}[name]()


@pytest.mark.parametrize("name", ["pass_by_family", "failure_stages", "alpha_acc", "alpha_time"])
def test_the_legend_is_beside_the_axes_never_over_the_data(name: str) -> None:
    fig = _drawn(name)
    [ax] = fig.axes
    legend = ax.get_legend()
    assert legend is not None
    box, area = legend.get_window_extent(), ax.get_window_extent()
    assert box.x0 >= area.x1, (box, area)  # entirely right of the plotting area
    assert box.y1 <= fig.bbox.height + 1  # and inside the figure's height (saved tight: nothing cut)
    plt.close(fig)


def test_a_system_at_zero_percent_has_a_visible_bar_and_its_value() -> None:
    fig = _drawn("pass_by_family")
    [ax] = fig.axes
    families = [t.get_text() for t in ax.get_xticklabels()]
    assert families == ["heat", "poisson", "stokes"]
    containers = {c.get_label(): c for c in ax.containers}
    assert set(containers) == {"agent", "zero"}
    zero = containers["zero"]
    low, _ = ax.get_ylim()
    for bar, family in zip(zero, families, strict=True):
        if family == "stokes":  # no verdict there: no bar (the tables say "-"), not a 0 % bar
            assert not bar.get_visible()
            continue
        assert bar.get_visible() and bar.get_height() == 0.0
        assert bar.get_linewidth() > 0 and bar.get_edgecolor()[3] > 0  # its edge is drawn: a line at 0
        assert low < 0.0  # above the axis line, not hidden by it
    labels = [t.get_text() for t in ax.texts if isinstance(t, Text)]
    assert labels.count("0") == 2 and labels.count("100") == 3 and "" in labels  # stokes: no label
    plt.close(fig)


def test_alpha_acc_ticks_are_the_alphas_written_plainly() -> None:
    """The log axis' own labels are mathtext (``$\\mathdefault{10^{1}}$``), printed raw where no
    label may be parsed as mathtext."""
    fig = _drawn("alpha_acc")
    [ax] = fig.axes
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks == [f"{a:g}" for a in agg.ALPHA_ACC]
    assert not any("$" in t.get_text() for t in ax.get_xticklabels(minor=True))
    plt.close(fig)


@pytest.mark.parametrize("families,systems", [(3, 2), (11, 4)])
def test_every_bar_value_is_inside_the_axes(families: int, systems: int) -> None:
    """Upright above wide bars, turned above narrow ones; a full bar's "100" is never cut by the
    top of the axis."""
    names = [f"family_{i}" for i in range(families)]
    vs = [verdict(f"system_{s}", i, "Pass", family=f) for s in range(systems) for i, f in enumerate(names)]
    fig = plots.pass_by_family.draw(agg.systems(vs))
    [ax] = fig.axes
    area = ax.get_window_extent()
    labels = [t for t in ax.texts if t.get_text()]
    assert len(labels) == families * systems and {t.get_text() for t in labels} == {"100"}
    for t in labels:
        box = t.get_window_extent()
        assert area.y0 <= box.y0 and box.y1 <= area.y1 - 3, (t.get_rotation(), box, area)  # clear of the frame
    plt.close(fig)
