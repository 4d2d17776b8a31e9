"""The release's semantic version: one rule table (``casekit.package.semver.classify``), by what an
agent or a score sees."""

from __future__ import annotations

from typing import Any

import pytest

from casekit.package.semver import Change, Diff, classify

TABLE: list[tuple[str, Any, Any, str, str]] = [
    # what an agent sees: data
    ("/case_spec/pde/params/kappa", "1", "2", "major", "specification"),
    ("/case_spec/eval_grid/nx", 64, 65, "major", "grid"),
    ("/case_spec/output/field", "u", "p", "major", "output contract"),
    ("/public_id", "c-1", "c-2", "major", "public id"),
    ("prompts/dolfinx/c-1.md", None, None, "major", "prompt"),
    # what a score sees: data
    ("references/poisson_a.npz", None, None, "major", "reference"),
    ("/evaluation_metadata/reference_config/levels", [1], [2], "major", "reference"),
    ("/evaluation_metadata/manufactured_solution/u", "x", "y", "major", "reference"),
    ("/evaluation_metadata/thresholds/tau_acc", 1e-3, 5e-4, "major", "accuracy threshold"),
    ("/evaluation_metadata/e_base", 1e-4, 2e-4, "major", "calibration error e_base"),
    ("/evaluation_metadata/targets/flux/tau", 1e-3, 1e-2, "major", "targets"),
    ("/evaluation_config/alpha_acc", 10, 20, "major", "gates"),
    ("/evaluation_config/alpha_time", 3, 5, "major", "gates"),
    ("/evaluation_config/timeout_sec", 20, 30, "major", "gates"),
    ("/evaluation_metadata/calibration_config/cells_across", 20, 40, "major", "calibration settings"),
    ("/evaluation_metadata/environment/libraries/dolfinx", "0.10.0", "0.11.0", "major", "library version"),
    ("/evaluation_metadata/environment/libraries/dolfinx", "0.11.0", None, "major", "library version"),
    ("schemas/case_record.schema.json", None, None, "major", "schema"),
    ("/schema_version", "1", "2", "major", "schema version"),
    ("/evaluation_metadata/brand_new_field", None, 1, "major", "evaluation metadata"),
    ("/brand_new_field", None, 1, "major", "record"),
    # cases and tracks appearing and disappearing
    ("case added", None, None, "minor", "added"),
    ("track added", None, None, "minor", "new track"),
    ("case removed", None, None, "major", "removed"),
    ("track removed", None, None, "major", "removed track"),
    # calibration timings under the paired gate, machine, patch versions: metadata
    ("/evaluation_metadata/t_base", 1.0, 1.2, "patch", "t_base"),
    ("/evaluation_metadata/t_base_runs", [1.0], [1.2], "patch", "t_base_runs"),
    ("/evaluation_metadata/thresholds/tau_time", 3.0, 3.6, "patch", "tau_time"),
    ("/evaluation_metadata/calibration_config/repeats", 3, 5, "patch", "timed runs"),
    ("/evaluation_metadata/environment/cpu_model", "A", "B", "patch", "machine"),
    ("/evaluation_metadata/environment/libraries/dolfinx", "0.11.0", "0.11.1", "patch", "library patch version"),
    ("/evaluation_metadata/environment/casekit_version", "0.1.0", "0.2.0", "patch", "casekit version"),
    ("/evaluation_metadata/source_hash", "a", "b", "patch", "source hash"),
    ("/content_hash", "a", "b", "patch", "content hash"),
    ("/tags", [], ["x"], "patch", "tags"),
    ("calibration/dolfinx/poisson_a.npz", None, None, "patch", "calibration solution"),
    # documentation
    ("README.md", None, None, "patch", "documentation"),
    ("croissant.json", None, None, "patch", "documentation"),
]


@pytest.mark.parametrize(("where", "old", "new", "level", "what"), TABLE, ids=[f"{r[0]}:{r[1]}" for r in TABLE])
def test_each_change_has_one_level(where: str, old: Any, new: Any, level: str, what: str) -> None:
    assert classify(where, old, new) == (level, what)


def test_a_release_takes_the_highest_level_and_keeps_metadata_apart() -> None:
    d = Diff([Change(*classify("/evaluation_metadata/t_base"), "a"), Change(*classify("/content_hash"), "a")])
    assert d.level == "patch" and d.changed == {} and d.metadata == {"a": ["t_base", "content hash"]}
    d.changes += [Change(*classify("case added"), "b")]
    assert d.level == "minor" and d.added == ["b"]
    d.changes += [Change(*classify("/evaluation_metadata/thresholds/tau_acc"), "a")]
    # the content hash moved with the data: it is not listed as metadata of its own
    assert d.level == "major" and d.changed == {"a": ["accuracy threshold"]} and d.metadata == {"a": ["t_base"]}
    assert Diff().level == "patch"
