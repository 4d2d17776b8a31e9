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
    rejected = {"poisson_e": "the calibration error e_base=5.6e-01 is not below 0.05"}
    md = table(REPORT, RECORDS, ("family", "math_type"), rejected)
    lines = md.splitlines()
    # grouped by the anchor's classification, and headed so: a released case's own may differ
    assert lines[0] == ("| anchor family | anchor math type | anchor records | released | kept | repaired | replaced "
                        "| not imported | rejected by the build |")
    assert "| heat | parabolic | 3 | 2 | 1 | 0 | 1 | 1 | 0 |" in lines
    assert "| poisson | elliptic | 2 | 1 | 0 | 1 | 0 | 0 | 1 |" in lines
    assert lines[-1].endswith("**5** | **3** | **1** | **1** | **1** | **1** | **1** |")  # authored: not counted
    by_domain = table(REPORT, RECORDS, ("family", "domain"), rejected)
    assert by_domain.splitlines()[0].startswith("| anchor family | anchor domain | anchor records |")
    assert "| heat | l_shape | 2 | 1 | 0 | 0 | 1 | 1 | 0 |" in by_domain.splitlines()
    text = section(REPORT, RECORDS, rejected)
    assert "per anchor family and math type" in text and "per anchor family and domain" in text


def test_the_section_names_each_case_the_build_rejected_with_the_builds_reason() -> None:
    """A record the import kept but the build rejected is not counted as not imported (the import
    report lists it with its case id, not with its reason): the section names it with the build's
    reason, and says which numbers each column counts and how they meet the import's own."""
    report = [{**e, "provenance": {"status": "replaced"}} if e["id"] else e for e in REPORT]
    text = section(report, RECORDS, {"poisson_e": "the calibration error e_base=5.6e-01 is not below 0.05"})
    assert "*Not imported* (1)" in text and "*Rejected by the build* (1)" in text and "*Released* (3)" in text
    assert "- `poisson_e` (anchor record `e`, replaced by the import): the calibration error e_base=5.6e-01 is " \
           "not below 0.05" in text
    assert "The import's own counts (`import-report.json`: replaced 4) include the records the build did not " \
           "release (1 replaced by the import)." in text
    assert "counted as not released with its reason in `import-report.json`" not in text
    assert "not built" not in text
    # without the build's report, the case is still named, as one the build directory has no outcome for
    text = section(report, RECORDS)
    assert "*Rejected by the build* (0)" in text and "*not built* (1)" in text
    assert "- `poisson_e` (anchor record `e`, replaced by the import): no outcome in the build" in text
    assert table(report, RECORDS, ("family",)).splitlines()[0].endswith("| rejected by the build | not built |")


def test_a_report_without_the_anchors_classification_is_refused() -> None:
    with pytest.raises(CasekitError, match="no anchor classification"):
        table([{"original_id": "a", "id": "x"}], RECORDS, ("family",))
