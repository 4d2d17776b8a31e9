"""casekit dataset answerable: the cases a committed build found answerable without solving."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from casekit import yamlio
from casekit.authoring.sibling import SIBLING_NOTES
from casekit.build import shards
from casekit.build.answerable import answerable
from casekit.build.pipeline import (
    GAPS_DO_NOT_SHRINK,
    NEAR_A_SPAN,
    REFUSED_BY_COUNT,
    REFUSED_BY_TIME,
    REJECTION_RULES,
    TOO_COARSE,
)
from casekit.cli import app
from casekit.errors import UsageError
from casekit.importers import replacements
from tests.helpers import build_source

runner = CliRunner()


def _entry(s: shards.Source, reason: str, rules: int = REJECTION_RULES, status: str = "rejected") -> dict:
    return {"format": shards.FORMAT, "id": s.id, "family": s.family, "key": "k", "source_key": s.source_key,
            "status": status, "reason": reason, "rules": rules, "files": {}, "build": {"seconds": 1.0, "jobs": 1}}


def test_cases_rejected_as_answerable_are_listed_by_anchor_for_the_import(tmp_path: Path) -> None:
    """Listed: a case rejected (current rules) because its reference lies near a span -- a
    numerical or a kept manufactured one as its record, a sibling by its draw; a numerical record
    whose reference the build cannot certify (a ladder whose gaps do not shrink; a calibration too
    coarse for it after the refinements the rules allow).  Not listed: a rejection of earlier rules
    (built again first), one of an edited source, a manufactured record rejected for another
    reason, a numerical one whose refinement this machine's speed refused or whose error says the
    solve may not have solved, and one another track built (certified).  --write adds them to the
    replace file and keeps what it held."""
    cases = tmp_path / "cases"
    numerical = build_source("heat", "unit_square", {}, 1)
    made = {}
    for name, manufactured, status in (("leaky", False, "kept"), ("own", True, "kept"), ("drawn", True, "replaced"),
                                       ("old_rules", False, "kept"), ("edited", False, "kept"),
                                       ("coarse", False, "kept"), ("coarse_own", True, "kept"),
                                       ("gaps", False, "kept"), ("slow", False, "kept"), ("wrong", False, "kept"),
                                       ("certified", False, "kept")):
        src = json.loads(json.dumps(numerical))
        src["id"] = f"heat_{name}"
        src["provenance"] = {"anchor": f"anchor_{name}", "status": status, "why": ""}
        if status == "replaced":
            src["notes"] = SIBLING_NOTES.format(anchor=f"anchor_{name}", attempt=7)
        if not manufactured:
            src.pop("manufactured_solution")
        (cases / "heat").mkdir(parents=True, exist_ok=True)
        (cases / "heat" / f"{src['id']}.yaml").write_text(yamlio.dumps(src))
        made[name] = src
    sources = {s.id: s for s in shards.read_sources([cases])}
    area = shards.Area(tmp_path / "area")
    span = f"{NEAR_A_SPAN}2.05e-05 of the forcing span (led by forcing.f@t=0): 0.000155 x tau_acc"
    coarse = (f"{TOO_COARSE}{{e:.3e}} is not below 0.05: the calibration settings are too coarse for this case "
              f"(refining the calibration would take about 4{REFUSED_BY_COUNT}; at most 3 in all, 0 done)")
    gaps = f"{GAPS_DO_NOT_SHRINK}: g01=5.3e-03, g12=6.4e-03"
    for name, entry in (("leaky", _entry(sources["heat_leaky"], span)),
                        ("own", _entry(sources["heat_own"], span)),
                        ("drawn", _entry(sources["heat_drawn"], span)),
                        ("old_rules", _entry(sources["heat_old_rules"], span, rules=REJECTION_RULES - 1)),
                        ("edited", {**_entry(sources["heat_edited"], span), "source_key": "another"}),
                        ("coarse", _entry(sources["heat_coarse"], coarse.format(e=0.3))),
                        ("coarse_own", _entry(sources["heat_coarse_own"], coarse.format(e=0.3))),
                        ("gaps", _entry(sources["heat_gaps"], gaps)),
                        ("slow", _entry(sources["heat_slow"], f"{TOO_COARSE}3.000e-01 is not below 0.05: the "
                                        f"calibration settings are too coarse for this case (refining the calibration "
                                        f"about 2 time(s) would take about 400 s per run, over the 120 s"
                                        f"{REFUSED_BY_TIME})")),
                        ("wrong", _entry(sources["heat_wrong"], coarse.format(e=0.9))),
                        ("certified", _entry(sources["heat_certified"], gaps))):
        path = area.entry_path("dolfinx", "heat", f"heat_{name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(entry))
    other = area.entry_path("ngsolve", "heat", "heat_certified")  # another track built it
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text(json.dumps(_entry(sources["heat_certified"], "", status="built")))
    listed = tmp_path / "replace.json"
    listed.write_text(json.dumps({"anchor_earlier": "found by an earlier build",
                                  "anchor_drawn": {"draws": {"3": "an earlier draw"}}}))
    result = runner.invoke(app, ["dataset", "answerable", str(cases), "--area", str(area.root), "--write", str(listed),
                                 "--tracks", "dolfinx,ngsolve", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert sorted(found) == ["anchor_coarse", "anchor_drawn", "anchor_gaps", "anchor_leaky", "anchor_own"]
    assert found["anchor_gaps"].startswith(GAPS_DO_NOT_SHRINK)
    assert found["anchor_leaky"].startswith(span) and found["anchor_own"].startswith(span)
    assert list(found["anchor_drawn"]) == ["draws"] and found["anchor_drawn"]["draws"]["7"].startswith(span)
    assert json.loads(listed.read_text()) == {
        "anchor_earlier": "found by an earlier build", "anchor_leaky": found["anchor_leaky"],
        "anchor_own": found["anchor_own"], "anchor_coarse": found["anchor_coarse"], "anchor_gaps": found["anchor_gaps"],
        "anchor_drawn": {"draws": {"3": "an earlier draw", "7": found["anchor_drawn"]["draws"]["7"]}}}
    assert replacements.read(listed).rejected_draws("anchor_drawn") == {3: "an earlier draw",
                                                                         7: found["anchor_drawn"]["draws"]["7"]}


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.integers(), st.text(max_size=5), st.lists(st.text(max_size=3), max_size=2),
                 st.dictionaries(st.text(max_size=6), st.one_of(st.text(max_size=4), st.integers(),
                                                                st.dictionaries(st.text(max_size=3),
                                                                                st.text(max_size=3), max_size=2)),
                                 max_size=3)))
def test_a_replace_file_is_read_or_refused_with_the_entry_named(data: object) -> None:
    """Any JSON value is either a replace list or a usage error saying what would be valid --
    never another exception -- and what parses writes back to itself."""
    try:
        parsed = replacements.parse(data, "replace.json")
    except UsageError as exc:
        assert "replace.json" in exc.message and exc.valid
        return
    assert replacements.parse(parsed.to_json(), "again") == parsed


def test_a_sibling_whose_calibration_is_too_coarse_is_drawn_again(tmp_path: Path) -> None:
    """A sibling rejected because its calibration error is over the limit after every refinement
    the rules allow (reaction-diffusion siblings whose time rates made backward Euler's error 2-4 %)
    is listed by its draw, as an answerable one is: another draw may pass.  A record rejected so is
    not replaced (its problem's calibration, not a drawn solution, is too coarse), nor a sibling
    rejected for its problem (a track that does not support its domain)."""
    cases = tmp_path / "cases"
    base = build_source("heat", "unit_square", {}, 1)
    coarse = "the calibration error e_base=4.2e-02 is not below 0.05: the calibration settings are too coarse"
    reasons = {"drawn": f"{coarse} (refining the calibration about 2 time(s) would take about 552 s per run)",
               "kept": coarse,
               "unsupported": "track 'dolfinx' does not support heat on unit_square"}
    for name in reasons:
        src = json.loads(json.dumps(base))
        src["id"] = f"heat_{name}"
        sibling = name != "kept"
        src["provenance"] = {"anchor": f"anchor_{name}", "status": "replaced" if sibling else "kept", "why": ""}
        if sibling:
            src["notes"] = SIBLING_NOTES.format(anchor=f"anchor_{name}", attempt=0)
        (cases / "heat").mkdir(parents=True, exist_ok=True)
        (cases / "heat" / f"{src['id']}.yaml").write_text(yamlio.dumps(src))
    area = shards.Area(tmp_path / "area")
    for s in shards.read_sources([cases]):
        path = area.entry_path("dolfinx", "heat", s.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_entry(s, reasons[s.id.removeprefix("heat_")])))
    found = answerable(area, shards.read_sources([cases]), ["dolfinx"])
    assert found.records == {}
    assert found.draws == {"anchor_drawn": {0: reasons["drawn"] + " (dolfinx build)"}}


def test_only_entries_built_before_the_trial_gated_the_expansion_are_audited(tmp_path: Path,
                                                                             monkeypatch: object) -> None:
    """A built entry of rules from TAYLOR_GATED_RULES on had the time-Taylor expansion gated in its
    build's trial: the audit (seconds of sympy per record) reads only the older ones, and lists
    those it finds answerable by their anchor."""
    from casekit.build import answerable as mod
    from casekit.build.pipeline import TAYLOR_GATED_RULES

    cases = tmp_path / "cases"
    base = build_source("heat", "unit_square", {}, 1)
    for name in ("old", "gated"):
        src = json.loads(json.dumps(base))
        src["id"] = f"heat_{name}"
        src["provenance"] = {"anchor": f"anchor_{name}", "status": "kept", "why": ""}
        (cases / "heat").mkdir(parents=True, exist_ok=True)
        (cases / "heat" / f"{src['id']}.yaml").write_text(yamlio.dumps(src))
    area = shards.Area(tmp_path / "area")
    rules = {"heat_old": TAYLOR_GATED_RULES - 1, "heat_gated": TAYLOR_GATED_RULES}
    for s in shards.read_sources([cases]):
        path = area.entry_path("dolfinx", "heat", s.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**_entry(s, "", rules=rules[s.id], status="built"), "record": {"id": s.id}}))
    audited: list[str] = []

    def audit(entry: dict) -> str:
        audited.append(entry["id"])
        return "the time-Taylor expansion of order 1 from t0 passes the accuracy gate"

    monkeypatch.setattr(mod, "near_taylor", audit)  # type: ignore[attr-defined]
    found = answerable(area, shards.read_sources([cases]), ["dolfinx"])
    assert audited == ["heat_old"]
    assert set(found.records) == {"anchor_old"}
