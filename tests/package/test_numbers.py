"""The dataset's numbers beside the paper's (no FEM: fabricated records and committed entries)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from casekit.cli import app
from casekit.families import FAMILIES
from casekit.package import numbers


def _record(family: str, e_base: float, t_base: float) -> dict[str, Any]:
    return {"pde_classification": {"equation_family": family},
            "evaluation_metadata": {"e_base": e_base, "t_base": t_base}}


def test_the_paper_table_is_appendix_f() -> None:
    assert set(numbers.PAPER) <= set(FAMILIES.names())
    assert sum(p.cases for p in numbers.PAPER.values()) == 645  # the paper's total
    assert sum(p.tracks["firedrake"] or 0 for p in numbers.PAPER.values()) == 510
    assert sum(p.tracks["dealii"] or 0 for p in numbers.PAPER.values()) == 313
    assert numbers.PAPER["poisson"].e_median == 8.0e-5 and numbers.PAPER["wave"].tracks["firedrake"] is None


def test_the_paper_columns_are_headed_by_what_they_hold() -> None:
    header = numbers.table({"dolfinx": [_record("heat", 1e-4, 1.0)]}).splitlines()[0]
    assert header == ("| family | track | cases | paper cases | e_base median | paper e_base median | e_base p95 | "
                      "paper e_base p95 | e_base max | paper e_base max | t_base median [s] |")


def test_medians_and_percentiles_beside_the_papers() -> None:
    # e_base 1e-4 .. 2e-3 (20 values, shuffled): median 1.05e-3, nearest-rank p95 the 19th, max the 20th
    es = [i * 1e-4 for i in range(1, 21)]
    recs = [_record("poisson", e, t) for e, t in zip(es[::-1], [1.0, 3.0] * 10, strict=True)]
    recs.append(_record("wave", 5e-4, 7.0))
    by_track = {"dolfinx": recs, "ngsolve": recs[:3]}
    rows = {(r.family, r.track): r for r in numbers.rows(by_track)}
    r = rows[("poisson", "dolfinx")]
    assert (r.cases, r.e_max, r.t_median) == (20, 2e-3, 2.0)
    assert abs(r.e_median - 1.05e-3) < 1e-15 and abs(r.e_p95 - 1.9e-3) < 1e-15
    assert rows[("poisson", "ngsolve")].cases == 3 and ("wave", "ngsolve") not in rows
    table = numbers.table(by_track)
    assert table.splitlines()[0].count("paper") == 4
    # the paper's figures beside ours; no paper count for a track the paper has not
    assert "| poisson | dolfinx | 20 | 91 | 1.1e-03 | 8.0e-05 | 1.9e-03 | 3.5e-04 | 2.0e-03 | 1.2e-03 | 2.00 |" in table
    assert "| poisson | ngsolve | 3 | -- |" in table
    assert "| wave | dolfinx | 1 | 42 | 5.0e-04 | 2.0e-04 |" in table
    text = numbers.markdown(by_track, {"dolfinx": numbers.machine_time([])})
    assert "arXiv 2605.09636" in text and "no t_base" in text and "| dolfinx | 0 | 0 | 0.00 | -- |" in text


def test_machine_time_and_the_command(tmp_path: Path) -> None:
    entries = [{"id": f"p{i}", "status": "built" if i < 3 else "rejected", "build": {"seconds": 10.0 * (i + 1)},
                "record": _record("poisson", 1e-4 * (i + 1), 2.0) if i < 3 else None} for i in range(4)]
    m = numbers.machine_time(entries)
    assert m == {"cases": 4, "built": 3, "seconds": 100.0, "seconds_per_case": 25.0}
    area = tmp_path / "area"
    (area / "dolfinx" / "poisson").mkdir(parents=True)
    for e in entries:
        (area / "dolfinx" / "poisson" / f"{e['id']}.json").write_text(json.dumps(e))
    r = CliRunner().invoke(app, ["dataset", "numbers", "--area", str(area), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["machine"]["dolfinx"] == m
    [row] = out["families"]
    assert row["cases"] == 3 and row["e_base_median"] == 2e-4 and row["paper"]["cases"] == 91
    r = CliRunner().invoke(app, ["dataset", "numbers", "--area", str(area)])
    assert r.exit_code == 0 and "| poisson | dolfinx | 3 | 91 |" in r.stdout and "| dolfinx | 4 | 3 |" in r.stdout
