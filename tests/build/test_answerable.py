"""casekit dataset answerable: the cases a committed build found answerable without solving."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from casekit import yamlio
from casekit.build import shards
from casekit.build.pipeline import NEAR_A_SPAN, REJECTION_RULES
from casekit.cli import app
from tests.helpers import build_source

runner = CliRunner()


def _entry(s: shards.Source, reason: str, rules: int = REJECTION_RULES, status: str = "rejected") -> dict:
    return {"format": shards.FORMAT, "id": s.id, "family": s.family, "key": "k", "source_key": s.source_key,
            "status": status, "reason": reason, "rules": rules, "files": {}, "build": {"seconds": 1.0, "jobs": 1}}


def test_numerical_cases_rejected_as_answerable_are_listed_by_anchor_for_the_import(tmp_path: Path) -> None:
    """Listed: a case without a manufactured solution rejected (current rules) because its
    reference lies near a span.  Not listed: a manufactured one (its sibling's draw is redone, not
    the record), a rejection of earlier rules (built again first), one of an edited source, a
    rejection for another reason.  --write adds them to the replace file and keeps what it held."""
    cases = tmp_path / "cases"
    numerical = build_source("heat", "unit_square", {}, 1)
    made = {}
    for name, manufactured in (("leaky", False), ("drawn", True), ("old_rules", False), ("edited", False),
                               ("coarse", False)):
        src = json.loads(json.dumps(numerical))
        src["id"] = f"heat_{name}"
        src["provenance"] = {"anchor": f"anchor_{name}", "status": "kept", "why": ""}
        if not manufactured:
            src.pop("manufactured_solution")
        (cases / "heat").mkdir(parents=True, exist_ok=True)
        (cases / "heat" / f"{src['id']}.yaml").write_text(yamlio.dumps(src))
        made[name] = src
    sources = {s.id: s for s in shards.read_sources([cases])}
    area = shards.Area(tmp_path / "area")
    span = f"{NEAR_A_SPAN}2.05e-05 of the forcing span (led by forcing.f@t=0): 0.000155 x tau_acc"
    for name, entry in (("leaky", _entry(sources["heat_leaky"], span)),
                        ("drawn", _entry(sources["heat_drawn"], span)),
                        ("old_rules", _entry(sources["heat_old_rules"], span, rules=REJECTION_RULES - 1)),
                        ("edited", {**_entry(sources["heat_edited"], span), "source_key": "another"}),
                        ("coarse", _entry(sources["heat_coarse"], "the calibration error e_base=0.3 is not below"))):
        path = area.entry_path("dolfinx", "heat", f"heat_{name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(entry))
    listed = tmp_path / "replace.json"
    listed.write_text(json.dumps({"anchor_earlier": "found by an earlier build"}))
    result = runner.invoke(app, ["dataset", "answerable", str(cases), "--area", str(area.root), "--write", str(listed),
                                 "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert list(found) == ["anchor_leaky"] and found["anchor_leaky"].startswith(span)
    assert json.loads(listed.read_text()) == {"anchor_earlier": "found by an earlier build",
                                              "anchor_leaky": found["anchor_leaky"]}
