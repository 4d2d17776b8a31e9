"""The progress display shared by build, validate and evaluate (casekit/cli/progress.py): its
arithmetic (counts, elapsed, time left) and its behaviour off a terminal (plain lines, nothing
redrawn, nothing on stdout).  Clocks are fake: no test depends on how fast the machine is."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from casekit.build import run
from casekit.build.pipeline import CaseOutcome
from casekit.cli import app
from casekit.cli.progress import Display, Tally, clock_text

# per unit: (seconds it took, its outcomes)
units = st.lists(st.tuples(st.floats(0, 1e4, allow_nan=False), st.lists(st.sampled_from(["Pass", "F-Acc", "x"]),
                                                                         max_size=3)), max_size=30)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _plain() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, force_terminal=False, highlight=False), out


@given(units, st.integers(0, 5))
def test_counts_follow_what_finished(done: list[tuple[float, list[str]]], more: int) -> None:
    tally = Tally(total=len(done) + more, order=("Pass", "F-Acc"))
    at = 0.0
    for seconds, outcomes in done:
        at += seconds
        tally.add(at, outcomes, parts=len(outcomes))
    assert tally.done == len(done) and tally.parts_done == sum(len(o) for _, o in done)
    assert sum(tally.counts.values()) == tally.parts_done
    text = tally.outcomes()
    for name, n in tally.counts.items():
        assert f"{n} {name}" in text
    named = [part.split(" ", 1)[1] for part in text.split(", ")] if text else []
    assert named == [k for k in ("Pass", "F-Acc") if k in tally.counts] + sorted(set(tally.counts) - {"Pass", "F-Acc"})


@given(st.floats(0.001, 1e4), st.integers(1, 50), st.integers(0, 50), st.floats(0, 1e5))
def test_time_left_is_the_mean_time_per_unit_times_the_units_left(per_unit: float, done: int, left: int,
                                                                  since: float) -> None:
    tally = Tally(total=done + left)
    for i in range(1, done + 1):
        tally.add(i * per_unit)
    at_last = done * per_unit
    eta = tally.eta(at_last)
    assert eta is not None and abs(eta - per_unit * left) <= 1e-9 * max(per_unit * left, 1.0)
    later = tally.eta(at_last + since)  # counted down while the next unit runs, never below zero
    assert later is not None and 0.0 <= later <= eta
    if left == 0:
        assert eta == 0.0 and not any(f.startswith("eta") for f in tally.figures(at_last))


def test_time_left_is_unknown_before_the_first_unit_or_without_a_total() -> None:
    assert Tally(total=5).eta(10.0) is None
    no_total = Tally()
    no_total.add(3.0)
    assert no_total.eta(4.0) is None
    assert no_total.figures(4.0)[0] == "1/?"


def test_time_per_unit_is_measured_from_when_the_work_was_known() -> None:
    tally = Tally(total=4, began_at=100.0, last_at=100.0)  # 100 s of planning before the first unit
    tally.add(110.0)
    assert tally.eta(110.0) == 30.0


@given(st.floats(-10, 1e6, allow_nan=False))
def test_clock_text_reads_back_as_whole_seconds(seconds: float) -> None:
    h, m, s = map(int, clock_text(seconds).split(":"))
    assert 0 <= m < 60 and 0 <= s < 60
    assert h * 3600 + m * 60 + s == max(int(seconds), 0)


def test_off_a_terminal_each_finished_unit_is_one_plain_line_with_the_figures() -> None:
    console, out = _plain()
    clock = FakeClock()
    with Display("evaluate", console, unit="cases", part_unit="attempts", order=("Pass", "F-Acc"),
                 clock=clock) as display:
        display.start(3, 5)
        display.note("running something")  # a terminal's live note only
        clock.now += 20
        display.advance(["Pass", "F-Acc"], parts=2, line="case_a: a Pass, b F-Acc")
        clock.now += 40
        display.advance(["F-Acc", "F-Acc"], parts=2, line="case_b: a F-Acc, b F-Acc")
        clock.now += 30
        display.advance(["Pass"], parts=1)  # nothing to say: no line
    lines = out.getvalue().splitlines()
    assert lines == [
        "[1/3 cases (2/5 attempts)] case_a: a Pass, b F-Acc -- 1 Pass, 1 F-Acc; 0:00:20 elapsed; eta 0:00:40",
        "[2/3 cases (4/5 attempts)] case_b: a F-Acc, b F-Acc -- 1 Pass, 3 F-Acc; 0:01:00 elapsed; eta 0:00:30",
    ]
    assert "\x1b" not in out.getvalue() and "\r" not in out.getvalue()  # nothing redrawn, no colours


def test_a_terminal_gets_a_live_line_with_bar_figures_and_the_last_case() -> None:
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True, color_system=None)
    clock = FakeClock()
    with Display("evaluate", console, unit="cases", part_unit="attempts", order=("Pass", "F-Acc"),
                 clock=clock) as display:
        display.start(2, 2)
        clock.now += 65
        display.advance(["Pass"], parts=1, line="a_very_long_case_identifier_that_must_not_be_cut_s3: sys Pass")
        display._bar.refresh()
    text = out.getvalue()
    assert re.search(r"evaluate .*1/2 cases \(1/2 attempts\) · 1 Pass · 0:01:05 elapsed · eta 0:01:05", text), text
    assert "last: a_very_long_case_identifier_that_must_not_be_cut_s3: sys Pass" in text
    assert "[1/2" not in text  # no plain lines on a terminal


def test_validate_style_absolute_progress_counts_files() -> None:
    console, out = _plain()
    with Display("validate", console, unit="files") as display:
        for done in (0, 2, 5):
            display.update(done, 5)
        assert display.tally.done == 5 and display.figures()[0] == "5/5 files"
    assert out.getvalue() == ""  # quiet off a terminal


@pytest.mark.dolfinx  # the command checks that the track is usable before it builds
def test_build_reports_each_case_on_the_shared_display(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``casekit build`` off a terminal: one line per finished case with the counts by status
    (the build itself is replaced: this is the command's display)."""
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text("id: x\n")

    def fake_build(paths: Any, opts: Any, jobs: int, *, progress: Any, done: Any, **_: Any) -> list[CaseOutcome]:
        outcomes = [CaseOutcome("case_a", Path("a.yaml"), "built", e_base=1e-3, t_base=2.0),
                    CaseOutcome("case_b", Path("b.yaml"), "rejected", reason="the gaps grow")]
        for o in outcomes:
            progress("case_x", "reference")
            done(o)
        return outcomes

    monkeypatch.setattr(run, "build", fake_build)
    result = CliRunner().invoke(app, ["build", str(tmp_path), "--build-dir", str(tmp_path / "b"), "--json"])
    lines = result.stderr.splitlines()
    assert re.fullmatch(r"\[1/2 cases\] case_a: built \(e_base 1\.00e-03, t_base 2\.00 s\) -- 1 built; "
                        r"\d+:\d\d:\d\d elapsed; eta \d+:\d\d:\d\d", lines[0]), lines
    assert re.fullmatch(r"\[2/2 cases\] case_b: rejected \(the gaps grow\) -- 1 built, 1 rejected; "
                        r"\d+:\d\d:\d\d elapsed", lines[1]), lines
    assert [o["status"] for o in json.loads(result.stdout)] == ["built", "rejected"]


def test_time_left_counts_only_the_parts_that_take_time() -> None:
    """An evaluation whose first cases have no submission (they finish at once) does not promise
    the rest as quick: the time is per attempt that runs (the rehearsal estimated 0:00:34 left at
    the start of a 7.5-minute run), and unknown until one has."""
    tally = Tally(total=600, parts_total=8400, work_total=11, began_at=0.0, last_at=0.0)
    for i in range(20):  # 20 cases without a submission, 0.15 s each
        tally.add(0.15 * (i + 1), ["F-Exec"] * 14, parts=14)
    assert tally.eta(3.0) is None and not any(f.startswith("eta") for f in tally.figures(3.0))
    tally.add(43.0, ["F-Exec"] * 13 + ["Pass"], parts=14, work=1)  # one attempt ran: 40 s
    eta = tally.eta(43.0)
    assert eta is not None and eta == 43.0 * 10  # ten attempts to run, at the time so far per run
    unweighted = Tally(total=600, began_at=0.0, last_at=0.0)
    unweighted.add(3.0, units=20)
    assert unweighted.eta(3.0) == 3.0 / 20 * 580  # without work_total: every unit alike, as before
