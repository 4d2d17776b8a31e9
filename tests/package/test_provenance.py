"""The card's anchor-vs-release tables (``casekit.package.provenance``)."""

from __future__ import annotations

import pytest

from casekit.errors import CasekitError
from casekit.package.provenance import section, table


def _entry(rid: str, cid: str | None, family: str, math: str, domain: str) -> dict:
    return {"original_id": rid, "id": cid, "anchor": {"family": family, "math_type": math, "domain": domain}}


def _record(cid: str, status: str | None) -> dict:
    meta = {"provenance": {"anchor": cid, "status": status, "why": ""}} if status else {}
    return {"id": cid, "evaluation_metadata": meta}


REPORT = [_entry("a", "heat_a", "heat", "parabolic", "unit_square"),
          _entry("b", "heat_b", "heat", "parabolic", "l_shape"),
          _entry("c", None, "heat", "parabolic", "l_shape"),            # not kept by the import
          _entry("d", "poisson_d", "poisson", "elliptic", "unit_square"),
          _entry("e", "poisson_e", "poisson", "elliptic", "unit_square")]  # kept, but the build rejected it
RECORDS = [_record("heat_a", "kept"), _record("heat_b", "replaced"), _record("poisson_d", "repaired"),
           _record("authored_x", None)]


def test_the_tables_count_every_anchor_record_once_and_how_it_is_released() -> None:
    md = table(REPORT, RECORDS, ("family", "math_type"))
    lines = md.splitlines()
    assert lines[0] == "| family | math type | anchor | released | kept | repaired | replaced | not released |"
    assert "| heat | parabolic | 3 | 2 | 1 | 0 | 1 | 1 |" in lines
    assert "| poisson | elliptic | 2 | 1 | 0 | 1 | 0 | 1 |" in lines
    assert lines[-1].endswith("**5** | **3** | **1** | **1** | **1** | **2** |")  # authored cases are not counted
    by_domain = table(REPORT, RECORDS, ("family", "domain"))
    assert "| heat | l_shape | 2 | 1 | 0 | 0 | 1 | 1 |" in by_domain.splitlines()
    text = section(REPORT, RECORDS)
    assert "per family and math type" in text and "per family and domain" in text


def test_a_report_without_the_anchors_classification_is_refused() -> None:
    with pytest.raises(CasekitError, match="no anchor classification"):
        table([{"original_id": "a", "id": "x"}], RECORDS, ("family",))
