"""Tables never cut an identifier: on a 100-column terminal, case ids that differ only at their
end (stokes_annulus_..._s0, ..._s1) stay whole and apart; the other columns wrap around them."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from casekit.cli.evaluate import verdict_table
from casekit.cli.output import MIN_OTHER, column_widths, table
from tests.report.test_report import verdict

#: ids as long as the issue's (they differ only at the end), and as long as the longest committed
SHORT = [f"stokes_annulus_small_smooth_dirichlet_s{i}" for i in range(3)]
LONG = [f"convection_diffusion_square_with_hole_low_smooth_steady_dirichlet_s100{i}" for i in range(3)]


def _render(renderable: object, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, soft_wrap=True, color_system=None).print(renderable)
    return out.getvalue()


def _first_column(text: str) -> str:
    """The first column's cells below the header, joined: folded ids join up again."""
    body = text.split("━\n", 1)[1]
    return "".join(line.split("│")[0].strip() for line in body.splitlines())


def _verdicts(ids: list[str], systems: tuple[str, ...] = ("agent_a",)) -> list[dict]:
    return [{**verdict(system, i, stage), "case_id": cid, "failure": {"category": "accuracy", "message":
             "the error 3.2e-02 is above the accuracy threshold of this case by a factor of ten"}}
            for system in systems for i, (cid, stage) in enumerate(zip(ids, ("F-Acc", "Pass", "F-Time"), strict=True))]


def test_the_evaluate_table_keeps_case_ids_whole_on_one_line_at_100_columns() -> None:
    text = _render(verdict_table(_verdicts(SHORT)), 100)
    assert all(len(line) <= 100 for line in text.splitlines()), text
    for cid in SHORT:
        assert cid in text, text
    assert "agent_a" in text  # one system: named in the title


@pytest.mark.parametrize("systems", [("agent_a",), ("agent_a", "agent_b_long_name")])
def test_ids_too_long_for_one_line_fold_whole_never_cut(systems: tuple[str, ...]) -> None:
    text = _render(verdict_table(_verdicts(LONG, systems)), 100)
    assert all(len(line) <= 100 for line in text.splitlines()), text
    assert "…" not in text
    if len(systems) == 1:
        assert _first_column(text) == "".join(LONG), text
    else:
        assert _first_column(text) == "".join(s for s in systems for _ in LONG), text
        column = "".join(line.split("│")[1].strip() for line in text.split("━\n", 1)[1].splitlines())
        assert column == "".join(LONG) * 2, text


def test_identifiers_fold_whole_when_the_terminal_is_narrower_than_them() -> None:
    text = _render(table(None, ("case", "note"), [(LONG[0], "x")], ids=("case",)), 30)
    assert _first_column(text) == LONG[0], text


@given(st.lists(st.tuples(st.integers(1, 80), st.booleans()), min_size=1, max_size=10), st.integers(20, 300))
def test_column_widths_keep_ids_natural_whenever_the_others_keep_their_minimum(cols: list[tuple[int, bool]],
                                                                             available: int) -> None:
    natural = [n for n, _ in cols]
    is_id = [i for _, i in cols]
    widths = column_widths(natural, is_id, available)
    if sum(natural) <= available:
        assert widths == [None] * len(cols)
        return
    assert all(w is not None and w >= 1 for w in widths)
    need = sum(n for n, i in cols if i) + sum(min(n, MIN_OTHER) for n, i in cols if not i)
    if need <= available:
        assert all(w == n for w, (n, i) in zip(widths, cols, strict=True) if i)
        assert sum(w for w in widths if w is not None) <= available
    for w, (n, i) in zip(widths, cols, strict=True):
        assert (w is not None and w <= n) or not i
