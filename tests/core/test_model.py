"""Case model round trips, schemas as the source of truth, atomic and deterministic output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit import schema, yamlio
from casekit.errors import CasekitError
from casekit.jsonio import atomic_write_text, canonical, content_hash
from casekit.model import AgentView, CaseRecord, CaseSource
from tests.helpers import poisson

RECORD = {
    "id": "poisson_test",
    "public_id": "case-0123456789abcdef",
    "pde_classification": {"equation_family": "poisson", "math_type": ["elliptic"]},
    "case_spec": {"pde": {"type": "poisson", "params": {"kappa": 1.0}, "forcing": {"f": "1"}},
                  "domain": {"type": "unit_square", "dim": 2, "bounds": [0, 1, 0, 1], "geometry_params": {},
                             "boundary_tags": {"left": "x = 0"}},
                  "bc": {"dirichlet": [{"tag": "left", "value": 0}]},
                  "eval_grid": {"type": "uniform", "nx": 4, "ny": 4, "bbox": [0, 1, 0, 1], "mask_outside": True},
                  "output": {"format": "npz", "field": "u"}},
    "evaluation_config": {"target_metric": "rel_l2_grid", "timeout_sec": 300, "alpha_acc": 10, "alpha_time": 3,
                          "tau_min": 1e-6},
    "evaluation_metadata": {"construction_method": "manufactured", "manufactured_solution": {"u": "x"},
                            "reference_config": {}, "calibration_config": {}, "reference_path": "r.npz",
                            "calibration_path": "c.npz", "thresholds": {"tau_acc": 1e-3, "tau_time": 3.0},
                            "e_base": 1e-4, "t_base": 1.0, "environment": {"casekit_version": "0"}},
    "tags": [],
    "supported_libraries": ["dolfinx"],
    "schema_version": "1.0",
    "content_hash": "0" * 64,
}


def test_source_round_trip_is_lossless_and_stable() -> None:
    src = poisson()
    model = CaseSource.from_dict(src)
    assert model.to_dict() == src
    text = yamlio.dumps(model.to_dict())
    assert yamlio.dumps(CaseSource.from_dict(yamlio.loads(text)).to_dict()) == text


def test_record_and_agent_view_round_trip() -> None:
    rec = CaseRecord.from_dict(RECORD).sealed()
    d = rec.to_dict()
    assert list(d) == list(RECORD)
    assert CaseRecord.from_dict(d).to_jsonl_line() == rec.to_jsonl_line()
    assert rec.compute_hash() == d["content_hash"]
    view = rec.agent_view("dolfinx").to_dict()
    assert set(view) == {"id", "case_spec", "target_library"} and view["id"] == RECORD["public_id"]
    assert not schema.validate(view, "agent_view")
    assert AgentView.from_dict(view).to_dict() == view
    assert not schema.validate(d, "case_record")


def test_every_schema_is_a_valid_draft_2020_12_schema(repo: Path) -> None:
    import jsonschema

    for path in sorted((repo / "schemas").glob("*.schema.json")):
        doc = json.loads(path.read_text())
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(doc)


def test_examples_in_the_repo_validate(repo: Path) -> None:
    """Every case source committed under cases/ conforms to the case source schema."""
    for path in sorted((repo / "cases").rglob("*.yaml")):
        assert not schema.validate(yamlio.load(path), "case_source"), path


def test_unknown_fields_are_errors() -> None:
    problems = schema.validate({**poisson(), "colour": "red"}, "case_source")
    assert [p.pointer for p in problems] == ["/colour"]
    assert "tracks" in (problems[0].valid or "")
    problems = schema.validate({**RECORD, "case_spec": {**RECORD["case_spec"], "extra": 1}}, "case_record")
    assert problems and problems[0].pointer == "/case_spec/extra"


def test_duplicate_yaml_keys_are_refused() -> None:
    with pytest.raises(CasekitError, match="duplicate key 'id'"):
        yamlio.loads("id: a\nid: b\n")


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=5), st.one_of(st.integers(), st.text(max_size=5),
                                                                      st.floats(allow_nan=False,
                                                                                allow_infinity=False))))
def test_content_hash_ignores_key_order(d: dict) -> None:
    reordered = dict(reversed(list(d.items())))
    assert content_hash(d) == content_hash(reordered)
    assert canonical(d) == canonical(reordered)


def test_atomic_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.txt"
    atomic_write_text(target, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_atomic_writes_get_the_permissions_open_would_give(tmp_path: Path) -> None:
    """Reports, records and datasets are readable as any file written with open() would be (not
    mkstemp's 0600); a private file asks for its mode."""
    import os

    from casekit.jsonio import FILE_MODE, atomic_write_bytes

    atomic_write_text(tmp_path / "public.txt", "x")
    (tmp_path / "plain.txt").write_text("x")
    assert (tmp_path / "public.txt").stat().st_mode & 0o777 == (tmp_path / "plain.txt").stat().st_mode & 0o777
    assert (tmp_path / "plain.txt").stat().st_mode & 0o777 == FILE_MODE
    atomic_write_bytes(tmp_path / "private", b"x", mode=0o600)
    assert os.stat(tmp_path / "private").st_mode & 0o777 == 0o600
