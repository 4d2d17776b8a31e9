"""Evaluating straight from a release, with nothing built (issue 29, item 5).

A release made in a temporary directory from two manufactured cases (the session's coarse
poisson and heat) and one numerical-reference case: it ships the numerical reference only,
compressed; ``casekit evaluate --release`` verifies it, samples the manufactured references from
the hidden solutions, and scores the calibration solvers (accurate) and a cheater (F-Acc) after
the build directory is gone; a tampered release and a track it does not carry are refused in one
line; ``datasets.load_dataset`` reads its configurations as a ``test`` split.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.cli import app
from casekit.errors import CasekitError
from casekit.evaluate.references import MANUFACTURED_REFERENCE
from casekit.evaluate.store import open_release, open_store
from casekit.model.record import CaseRecord
from casekit.package.build_dist import package, write_manifest
from casekit.package.release import release
from casekit.package.semver import diff
from casekit.package.verify import verify
from casekit.runner.limits import Limits
from tests.helpers import write

pytestmark = pytest.mark.dolfinx
runner = CliRunner()

NUMERICAL = "poisson_no_exact_unit_load"


def _numerical_case() -> dict[str, Any]:
    """A Poisson case without a manufactured solution: its reference is a refined solve."""
    return {
        "id": NUMERICAL, "family": "poisson", "domain": {"template": "unit_square"},
        "pde": {"params": {"kappa": "1 + x*y"}, "forcing": {"f": "exp(-20*((x-0.3)**2 + (y-0.6)**2))"}},
        "boundary": {t: {"kind": "dirichlet", "value": 0} for t in ("bottom", "right", "top", "left")},
        "eval_grid": {"nx": 21, "ny": 21}, "output": {"field": "u"},
        "calibration": {"cells_across": 12, "degree": 2},
        "reference": {"levels": [{"cells_across": 24, "degree": 2}, {"cells_across": 48, "degree": 3}]},
        "evaluation": {"timeout_sec": 20.0},
        "tracks": ["dolfinx"],
    }


@pytest.fixture(scope="module")
def made(built: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The release ``releases/rel-set/1.0.0`` in a fresh directory; the build it was made from
    is kept aside (``build``) only to compare references with, and never given to the evaluator."""
    root = tmp_path_factory.mktemp("release")
    work = root / "build"
    shutil.copytree(built / "build", work)
    (o,) = build([write(root, _numerical_case())], BuildOptions(work, "dolfinx", repeats=1,
                                                                limits=Limits(timeout_sec=300)))
    assert o.status == "built", o.reason
    package(work, ["dolfinx"], root / "dist", name="rel-set", version="0.1.0")
    p = release(root / "dist", requested="1.0.0", releases=root / "releases", date="2026-01-10")
    shutil.rmtree(root / "dist")
    return {"root": root, "release": p.target, "build": work}


def test_a_release_ships_only_the_numerical_references_compressed(made: dict[str, Any]) -> None:
    rel, work = made["release"], made["build"]
    assert verify(rel) == []
    records = {json.loads(ln)["id"]: json.loads(ln) for ln in (rel / "cases.jsonl").read_text().splitlines()}
    assert len(records) == 3
    paths = {cid: r["evaluation_metadata"]["reference_path"] for cid, r in records.items()}
    assert paths[NUMERICAL] == f"references/{NUMERICAL}.npz"
    assert [p for cid, p in paths.items() if cid != NUMERICAL] == [MANUFACTURED_REFERENCE] * 2
    assert sorted(p.name for p in (rel / "references").iterdir()) == [f"{NUMERICAL}.npz"]
    shipped = rel / "references" / f"{NUMERICAL}.npz"
    with zipfile.ZipFile(shipped) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
    size = shipped.stat().st_size
    card = (rel / "README.md").read_text()
    assert f"1 of the 3 case(s) of the dataset ({size:,} bytes compressed" in card
    # every reference the evaluator uses is the build's, to the bit
    store = open_release(rel, "dolfinx")
    assert store.shipped_references() == (2, 1, size)
    for cid, rec in records.items():
        got = store.reference(cid).load(rec["case_spec"])
        with np.load(work / "dolfinx" / cid / "reference.npz") as z:
            for name, a in got.items():
                np.testing.assert_array_equal(a, z[name])
        assert store.reference(cid).manufactured == (cid != NUMERICAL)


def test_evaluate_from_a_release_with_nothing_built(made: dict[str, Any], tmp_path: Path) -> None:
    rel = tmp_path / "releases" / "rel-set" / "1.0.0"  # a fresh clone: the release and nothing else
    shutil.copytree(made["release"], rel)
    subs = tmp_path / "subs"
    result = runner.invoke(app, ["baselines", "--cases", str(rel), "--out", str(subs), "--kind", "calibration",
                                 "--kind", "zero"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "eval"
    result = runner.invoke(app, ["evaluate", "--release", str(rel), "--track", "dolfinx", "--submissions",
                                 str(subs / "calibration"), "--submissions", str(subs / "zero"), "--out", str(out),
                                 "--repeats", "1", "--json"])
    assert result.exit_code == 0, result.output
    size = (rel / "references" / f"{NUMERICAL}.npz").stat().st_size
    assert (f"release rel-set 1.0.0 verified: 3 case(s) on dolfinx; 2 manufactured reference(s) sampled from their "
            f"solutions, 1 numerical reference(s) shipped compressed ({size} bytes)") in result.output
    verdicts = [json.loads(ln) for ln in (out / "verdicts.jsonl").read_text().splitlines()]
    records = open_store(rel, "dolfinx").records
    by = {(v["system"], v["case_id"]): v for v in verdicts}
    assert len(by) == 6
    for cid, rec in records.items():
        cal, zero = by[("calibration", cid)], by[("zero", cid)]
        tau = rec["evaluation_metadata"]["thresholds"]["tau_acc"]
        # the calibration solver reproduces its build-time error against the release's reference
        assert cal["stage"] in ("Pass", "F-Time"), cal
        assert cal["error"] <= tau and cal["error"] == pytest.approx(rec["evaluation_metadata"]["e_base"], rel=0.05)
        assert cal["record_content_hash"] == rec["content_hash"]
        assert zero["stage"] == "F-Acc" and zero["error"] > tau, zero


def test_a_tampered_release_or_a_track_it_does_not_carry_is_refused(made: dict[str, Any], tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    (subs / "x").mkdir(parents=True)
    (subs / "x" / "solver.py").write_text("def solve(case_spec):\n    pass\n")

    def evaluate(rel: Path, track: str = "dolfinx") -> Any:
        return runner.invoke(app, ["evaluate", "--release", str(rel), "--track", track, "--submissions", str(subs),
                                   "--out", str(tmp_path / "eval"), "--repeats", "1"])

    result = evaluate(made["release"], "firedrake")
    assert result.exit_code == 2 and "carries no firedrake track (valid: dolfinx)" in result.output
    assert len(result.output.strip().splitlines()) == 1
    # a shipped numerical reference changed after the release
    bad = tmp_path / "bad"
    shutil.copytree(made["release"], bad)
    ref = bad / "references" / f"{NUMERICAL}.npz"
    with np.load(ref) as z:
        arrays = {k: z[k] for k in z.files}
    np.savez_compressed(ref, **{k: v if k in ("x", "y") else 0.5 * v for k, v in arrays.items()})
    result = evaluate(bad)
    assert result.exit_code == 2 and "does not verify, refusing to evaluate against it" in result.output
    assert f"references/{NUMERICAL}.npz: does not match its sha256" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "eval").exists()
    # the same file met without verifying first (--cases): its sha256 is checked when it is loaded
    store = open_store(bad, "dolfinx")
    with pytest.raises(CasekitError, match="does not match its sha256 in the manifest"):
        store.reference(NUMERICAL).load(store.records[NUMERICAL]["case_spec"])
    # a record's hidden solution edited (the reference of a manufactured case)
    bad = tmp_path / "bad2"
    shutil.copytree(made["release"], bad)
    lines = (bad / "cases.jsonl").read_text().splitlines()
    rec = json.loads(lines[-1])
    assert rec["evaluation_metadata"]["reference_path"] == MANUFACTURED_REFERENCE
    rec["evaluation_metadata"]["manufactured_solution"]["u"] = "0"
    (bad / "cases.jsonl").write_text("\n".join([*lines[:-1], json.dumps(rec)]) + "\n")
    result = evaluate(bad)
    assert result.exit_code == 2 and "does not verify" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = evaluate(tmp_path / "nowhere")
    assert result.exit_code == 2 and "is not a casekit release" in result.output


def test_load_dataset_reads_the_release_as_a_test_split(made: dict[str, Any], tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rel = made["release"]
    cases = [json.loads(ln) for ln in (rel / "cases.jsonl").read_text().splitlines()]
    agent = [json.loads(ln) for ln in (rel / "agent.jsonl").read_text().splitlines()]
    loaded = datasets.load_dataset(str(rel), "cases", cache_dir=str(tmp_path / "hf"))
    assert list(loaded) == ["test"] and loaded["test"].num_rows == len(cases) == 3
    for got, rec in zip(loaded["test"], cases, strict=True):
        assert got["id"] == rec["id"] and got["case_spec"] == rec["case_spec"]
        assert got["evaluation_config"] == rec["evaluation_config"]
        meta, want = got["evaluation_metadata"], rec["evaluation_metadata"]
        assert set(meta) == set(want) and meta.get("manufactured_solution") == want.get("manufactured_solution")
        # datasets re-encodes rows with JSON columns at 10 decimal places (the card says so)
        assert meta["thresholds"] == pytest.approx(want["thresholds"], rel=0, abs=1e-10)
    views = datasets.load_dataset(str(rel), split="test", cache_dir=str(tmp_path / "hf"))  # the default: agent
    assert views.num_rows == len(agent) == 3 and views.column_names == ["id", "case_spec", "target_library"]
    assert [v["case_spec"] for v in views] == [a["case_spec"] for a in agent]


def test_the_card_declares_features_that_hold_across_chunks(tmp_path: Path) -> None:
    """Records of different families differ in shape (a parameter that is a number here, an
    expression or a vector there; hidden solutions with other unknowns; fields only some records
    have): the card's declared features load them in any number of chunks, where inferring a type
    from the first chunk fails."""
    datasets = pytest.importorskip("datasets")
    from casekit.package.card import card

    rows = []
    for i in range(60):
        value: Any = [f"x*{i}", "y"] if i % 3 == 0 else (f"sin({i}*x)" if i % 3 == 1 else float(i))
        meta: dict[str, Any] = {"e_base": 3.2123456789e-9 * (i + 1), "t_base": 1.0 + i / 7,
                                "thresholds": {"tau_acc": 1e-6 + i / 3e7, "tau_time": 3.0 + i},
                                "t_base_runs": [1.0 + i / 7, 1.1], "timeout_sec": 300 if i % 2 else 20.5,
                                "manufactured_solution": {"u": "x*y"} if i % 2 else {"velocity": ["y", "-x"],
                                                                                       "p": "0"}}
        if i % 5 == 0:
            meta["refinement"] = {"g01": 0.1, "g12": 0.01}
        rows.append({"id": f"c{i:03d}", "public_id": f"case-{i:016x}",
                     "pde_classification": {"equation_family": "poisson", "math_type": ["elliptic"]},
                     "case_spec": {"pde": {"params": {"kappa": value}}, "domain": {"type": "unit_square"},
                                   "pad": "p" * 2000},
                     "evaluation_metadata": meta, "tags": [], "supported_libraries": ["dolfinx", "firedrake"]})
    text = card("mixed", "1.0.0", rows, ["dolfinx", "firedrake"], "cc-by-4.0", {"dolfinx": rows, "firedrake": rows})
    (tmp_path / "data" / "tracks").mkdir(parents=True)
    root = tmp_path / "data"
    (root / "README.md").write_text(text)
    for path in ("cases.jsonl", "tracks/firedrake.jsonl"):
        (root / path).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "agent.jsonl").write_text("".join(json.dumps({"id": r["public_id"], "case_spec": r["case_spec"],
                                                          "target_library": lib}) + "\n"
                                              for r in rows for lib in ("dolfinx", "firedrake")))
    for config, n in (("cases", 60), ("cases_firedrake", 60), ("agent", 120)):
        ds = datasets.load_dataset(str(root), config, split="test", chunksize=16 << 10,
                                   cache_dir=str(tmp_path / "hf"))
        assert ds.num_rows == n
        if config != "agent":
            assert [r["evaluation_metadata"]["e_base"] for r in ds] == \
                pytest.approx([r["evaluation_metadata"]["e_base"] for r in rows], rel=0, abs=1e-10)
            assert [r["evaluation_metadata"]["manufactured_solution"] for r in ds] == \
                [r["evaluation_metadata"]["manufactured_solution"] for r in rows]
    assert [r["case_spec"] for r in ds][::2] == [r["case_spec"] for r in rows]


def test_a_release_that_shipped_manufactured_references_is_the_same_data(made: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    """Releases packaged before references were sampled shipped every reference as a file; the
    next release, which samples them, changes no data (the solution is compared in the record)."""
    old = tmp_path / "old"
    shutil.copytree(made["release"], old)
    lines = []
    for ln in (old / "cases.jsonl").read_text().splitlines():
        rec = json.loads(ln)
        meta = rec["evaluation_metadata"]
        if meta["reference_path"] == MANUFACTURED_REFERENCE:
            meta["reference_path"] = f"references/{rec['id']}.npz"
            shutil.copyfile(made["build"] / "dolfinx" / rec["id"] / "reference.npz", old / meta["reference_path"])
        lines.append(json.dumps(CaseRecord.from_dict(rec).sealed().to_dict()))
    (old / "cases.jsonl").write_text("\n".join(lines) + "\n")
    write_manifest(old, "rel-set", "1.0.0", ["dolfinx"])
    assert verify(old) == []
    d = diff(made["release"], old)
    assert d.level == "patch" and d.changed == {}, d.changes
    assert set(d.metadata) == {r["id"] for r in map(json.loads, lines) if r["id"] != NUMERICAL}
    assert all("reference sampled from its manufactured solution" in w for w in d.metadata.values())
