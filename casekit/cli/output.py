"""What the commands print, and where.

Data goes to stdout, everything else (progress, notes, warnings) to stderr.  A result command
given ``--json`` prints exactly one JSON document on stdout and routes the lines it would have
printed as text to stderr (:class:`Output`), so ``casekit CMD --json | jq`` always parses.

Markup is off everywhere: messages quote untrusted text (case sources, submissions' output),
which must print as written and can never break the output; styles are given as Text styles.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def _width(stream: Any) -> int | None:
    """The terminal's width, or no limit when the output is piped or redirected (tables are then
    printed whole, for scripts to read, instead of cut to 80 columns)."""
    try:
        return None if stream.isatty() else 100_000
    except (AttributeError, ValueError):
        return 100_000


console = Console(highlight=False, soft_wrap=True, markup=False, width=_width(sys.stdout))
console_err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, width=_width(sys.stderr))


def print_json(data: Any) -> None:
    """Machine-readable output (``--json``): one JSON document on stdout, nothing else there."""
    from casekit.jsonio import dumps

    text = dumps(data, indent=2)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


class Output:
    """The output of one result command: with ``--json`` (``as_json``) every line and table goes
    to stderr and :meth:`result` prints the one JSON document on stdout; without it, lines and
    tables go to stdout and :meth:`result` prints nothing (the text was the result)."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.console = console_err if as_json else console

    def say(self, text: str | Text) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def result(self, data: Any) -> None:
        if self.as_json:
            print_json(data)


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[str | Text]], *,
          ids: Sequence[str] = (), right: Sequence[str] = ()) -> IdTable:
    """A table whose identifier columns (``ids``: case ids, system names) are never cut (see
    :class:`IdTable`); ``right`` names the right-aligned columns."""
    return IdTable(title, columns, rows, ids=ids, right=right)


def print_tables(blocks: Sequence[tuple[str, Sequence[str], Sequence[Sequence[str]]]]) -> None:
    """Tables as (title, header, rows), as the report and campaign renderers give them: the first
    column names what a row is about (a system, a family) and is never cut; the numbers align right."""
    from casekit.cli.app import console

    for title, header, body in blocks:
        console.print(table(title, header, body, ids=header[:1], right=header[1:]))


class IdTable:
    """A table whose identifier columns are never cut, so ids that differ only at the end stay
    apart on a narrow terminal: they keep their full width and the other columns wrap (or fold)
    into what is left; only when the identifiers alone leave too little do they fold onto further
    lines, still whole."""

    def __init__(self, title: str | None, columns: Sequence[str], rows: Sequence[Sequence[str | Text]], *,
                 ids: Sequence[str] = (), right: Sequence[str] = ()) -> None:
        self.title, self.columns, self.ids, self.right = title, list(columns), set(ids), set(right)
        self.rows = [[c if isinstance(c, Text) else Text(str(c)) for c in r] for r in rows]

    def build(self, max_width: int) -> Table:
        """The rich table for a console ``max_width`` cells wide."""
        natural = [max([len(c), *(r[i].cell_len for r in self.rows)]) for i, c in enumerate(self.columns)]
        widths = column_widths(natural, [c in self.ids for c in self.columns], max_width - SEPARATOR * (
            len(self.columns) - 1) - 2)
        t = Table(title=self.title, show_edge=False, title_justify="left")
        for col, w in zip(self.columns, widths, strict=True):
            t.add_column(col, justify="right" if col in self.right else "left", overflow="fold", width=w)
        for r in self.rows:
            t.add_row(*r)
        return t

    def __rich_console__(self, console: Any, options: Any) -> Any:
        yield self.build(options.max_width)


#: cells between two columns (" │ ")
SEPARATOR = 3
#: what a column other than an identifier keeps at least, when identifiers take the rest
MIN_OTHER = 5


def column_widths(natural: Sequence[int], is_id: Sequence[bool], available: int) -> list[int | None]:
    """Column widths for ``available`` cells: None (their natural width) when everything fits;
    otherwise identifier columns keep their natural width while the others can have at least
    ``MIN_OTHER`` cells each (those share the rest in proportion to their natural widths), else
    the identifiers share what the others leave at ``MIN_OTHER`` (and fold)."""
    if sum(natural) <= available:
        return [None] * len(natural)
    floor = [n if i else min(n, MIN_OTHER) for n, i in zip(natural, is_id, strict=True)]
    ids_total = sum(n for n, i in zip(natural, is_id, strict=True) if i)
    others_min = sum(f for f, i in zip(floor, is_id, strict=True) if not i)
    out: list[int | None] = list(natural)
    if ids_total + others_min > available:  # the identifiers fold, taking at least half the width
        room = min(max(available - others_min, available // 2), ids_total)
        n_others = len(is_id) - sum(is_id)
        rest = max(available - room, n_others)
        for k, i in enumerate(is_id):
            out[k] = max(1, room * natural[k] // ids_total) if i else max(1, min(floor[k], rest // n_others))
        return out
    room = available - ids_total
    others = [k for k, i in enumerate(is_id) if not i]
    # water-filling: each other column gets its natural width or an equal share, whichever is less
    left = sorted(others, key=lambda k: natural[k])
    while left:
        share = room // len(left)
        k = left[0]
        if natural[k] <= share:
            out[k] = natural[k]
            room -= natural[k]
            left.pop(0)
            continue
        for j, k in enumerate(left):
            out[k] = max(floor[k], share + (1 if j < room - share * len(left) else 0))
        break
    return out
