"""The progress display of long commands (build, dataset build, validate, evaluate): one mechanism.

It writes to stderr only: stdout carries the data (tables, ``--json``).  On a terminal it is one
live line -- label, bar, units done of the total (with their parts: a case's attempts), the
outcomes so far, elapsed time, the estimated time left and what finished last.  Anywhere else (a
log file, CI, a pipe) nothing is redrawn: each finished unit that has something to say prints one
plain line with the same figures, so a long run shows where it is.

:class:`Tally` is the arithmetic (counts and the estimate), free of any output, so it is tested
on its own; :class:`Display` draws it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rich.console import Console, RenderableType
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
from rich.table import Column
from rich.text import Text


def clock_text(seconds: float) -> str:
    """Seconds as h:mm:ss (whole seconds, rounded down; negative counts as zero)."""
    s = max(int(seconds), 0)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


@dataclass
class Tally:
    """Units done of a total (cases, files), the parts they held (a case's attempts), how many
    of each outcome (Pass, F-Acc; built, rejected) so far, and when the last unit finished."""

    total: int | None = None
    unit: str = ""
    parts_total: int | None = None
    part_unit: str = ""
    #: outcomes listed first, in this order; others follow alphabetically
    order: tuple[str, ...] = ()
    done: int = 0
    parts_done: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    #: elapsed seconds when the work was known (the time per unit is measured from there) and
    #: when the last unit finished
    began_at: float = 0.0
    last_at: float = 0.0
    #: the parts that take the time (an evaluation's attempts that run; None: every unit alike),
    #: and how many of them finished
    work_total: int | None = None
    work_done: int = 0

    def add(self, at: float, outcomes: Iterable[str] = (), units: int = 1, parts: int = 0, work: int = 0) -> None:
        """``units`` finished ``at`` seconds after the start, holding ``parts`` parts with these
        outcomes, ``work`` of which took time."""
        self.done += units
        self.parts_done += parts
        self.work_done += work
        for o in outcomes:
            self.counts[o] = self.counts.get(o, 0) + 1
        self.last_at = max(self.last_at, at)

    def eta(self, now: float) -> float | None:
        """Seconds left ``now`` seconds after the start: the mean time per unit so far (from
        ``began_at``) times the units left -- per part that takes time when ``work_total`` says
        how many do (units without any, an evaluation's cases without a submission, finish at
        once and would make the rest look as quick) -- counted down since the last unit finished
        (never below zero; 0 when all are done); None before the first unit (the first part that
        takes time) finished or without a total."""
        if self.total is None or self.done <= 0:
            return None
        left = self.total - self.done
        if left <= 0:
            return 0.0
        spent = max(self.last_at - self.began_at, 0.0)
        if self.work_total:
            if self.work_done <= 0:
                return None
            estimate = spent / self.work_done * max(self.work_total - self.work_done, 0)
        else:
            estimate = spent / self.done * left
        return max(estimate - max(now - self.last_at, 0.0), 0.0)

    def outcomes(self) -> str:
        """``2 Pass, 1 F-Acc``: every outcome seen, the ordered ones first."""
        keys = [k for k in self.order if self.counts.get(k)] + sorted(k for k in self.counts if k not in self.order)
        return ", ".join(f"{self.counts[k]} {k}" for k in keys)

    def figures(self, now: float) -> list[str]:
        """What a display shows ``now`` seconds after the start: done/total (with the parts),
        the outcomes so far, elapsed, time left; empty figures are left out."""
        count = f"{self.done}/{'?' if self.total is None else self.total}"
        count += f" {self.unit}" if self.unit else ""
        if self.parts_total is not None:
            count += f" ({self.parts_done}/{self.parts_total}{' ' + self.part_unit if self.part_unit else ''})"
        eta = self.eta(now)
        out = [count, self.outcomes(), f"{clock_text(now)} elapsed"]
        if eta is not None and self.done < (self.total or 0):
            out.append(f"eta {clock_text(eta)}")
        return [f for f in out if f]


class _Figures(ProgressColumn):
    """The tally's figures, recomputed at every refresh (elapsed and eta tick between units)."""

    def __init__(self, display: Display) -> None:
        super().__init__(table_column=Column(no_wrap=True))
        self.display = display

    def render(self, task: Task) -> Text:
        return Text(" · ".join(self.display.figures()))


class _Lines(Progress):
    """The bar and its figures on one line, the note (what finished or runs: case ids, which
    must not be cut to make room for the figures) on a line of its own below."""

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            if task.fields.get("note"):
                yield Text(f"  {task.fields['note']}", no_wrap=True, overflow="ellipsis")


class Display:
    """A progress display on ``console`` (stderr), shown while the ``with`` block runs: live on
    a terminal, plain lines elsewhere."""

    def __init__(self, label: str, console: Console, *, unit: str = "", part_unit: str = "",
                 order: tuple[str, ...] = (), transient: bool = False, live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.live = console.is_terminal if live is None else live
        self.tally = Tally(unit=unit, part_unit=part_unit, order=order)
        self._clock = clock
        self._t0 = clock()
        self._lock = threading.Lock()
        self._bar = _Lines(TextColumn(label, style="bold", markup=False), BarColumn(bar_width=20), _Figures(self),
                           console=console,
                           transient=transient, disable=not self.live,
                           redirect_stdout=False)  # stdout is data: never drawn through the display
        self._task = self._bar.add_task(label, total=None, note="")

    def elapsed(self) -> float:
        return self._clock() - self._t0

    def figures(self) -> list[str]:
        with self._lock:
            return self.tally.figures(self.elapsed())

    def start(self, total: int, parts: int | None = None, work: int | None = None) -> None:
        """The work is known: ``total`` units (holding ``parts`` parts, ``work`` of which take
        the time: :attr:`Tally.work_total`)."""
        with self._lock:
            self.tally.total, self.tally.parts_total, self.tally.work_total = total, parts, work
            self.tally.began_at = self.tally.last_at = self.elapsed()
        self._bar.update(self._task, total=total, completed=self.tally.done)

    def update(self, done: int, total: int) -> None:
        """Absolute progress (``done`` of ``total`` units), as ``validate_paths`` reports it."""
        with self._lock:
            self.tally.total = total
            self.tally.add(self.elapsed(), units=done - self.tally.done)
        self._bar.update(self._task, completed=done, total=total)

    def note(self, text: str) -> None:
        """What is running now (shown on a terminal only)."""
        self._bar.update(self._task, note=text)

    def advance(self, outcomes: Iterable[str] = (), parts: int = 0, line: str = "", work: int = 0) -> None:
        """One unit finished (with ``parts`` parts and these outcomes, ``work`` of them took
        time); ``line`` says which and how, as a note on a terminal, as a printed line elsewhere."""
        with self._lock:
            self.tally.add(self.elapsed(), outcomes, parts=parts, work=work)
            figures = self.tally.figures(self.elapsed())
        self._bar.update(self._task, completed=self.tally.done, note=f"last: {line}" if line else "")
        if not self.live and line:
            self.say(f"[{figures[0]}] {line} -- " + "; ".join(figures[1:]))

    def say(self, text: str) -> None:
        """A line of its own above the display (markup off: it may quote untrusted text)."""
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def stop(self) -> None:
        """The live line ends here (before a message that closes the run, such as an interrupt)."""
        self._bar.stop()

    def __enter__(self) -> Display:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()
