"""The deal.II track: its calibration program converges at the theoretical rate on a straight and
a curved domain per family, C++ submissions compile and run isolated (a passing one, a compile
error, a wrong output shape), and the cross-track agreement check passes and fails as it should.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from casekit import yamlio
from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.derive import derive
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.model.source import CaseSource
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS
from tests.helpers import build_source

pytestmark = pytest.mark.dealii



@pytest.fixture(scope="module")
def track():  # type: ignore[no-untyped-def]
    from casekit.envs import ENVIRONMENTS

    env = ENVIRONMENTS.get("dealii").check()
    if not env.usable:  # skip only where deal.II is not installed; a broken program fails
        pytest.skip(f"deal.II is not installed here: {env.reason} (casekit env install dealii)")
    t = TRACKS.get("dealii")
    ok, why = t.status()
    assert ok, why
    return t



def test_simplex_degree_three_is_refused_with_the_reason(track) -> None:  # type: ignore[no-untyped-def]
    from casekit.errors import CasekitError

    d = derive(CaseSource.from_dict(build_source("poisson", "circle", {}, seed=1)))
    with pytest.raises(CasekitError) as err:
        track.calibration_files({"degree": 3, "cells_across": 8}, d.case_spec())
    assert "degree 1 and 2 only" in err.value.message and err.value.valid


# -- a built case, both tracks -----------------------------------------------------------------


@pytest.fixture(scope="module")
def both(track, tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("both")
    src = build_source("poisson", "annulus", {"bc": "mixed"}, 5)
    src["eval_grid"] = {"nx": 25, "ny": 25}
    src["calibration"] = {**src["calibration"], "cells_across": 20}
    src["evaluation"]["timeout_sec"] = 30.0
    src["tracks"] = ["dolfinx", "dealii"]
    path = root / "cases" / "poisson" / f"{src['id']}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yamlio.dumps(src))
    for name in ("dolfinx", "dealii"):
        [o] = build([path], BuildOptions(root / "build", name, repeats=1, limits=Limits(timeout_sec=300)))
        assert o.status == "built", o.reason
    return root, path, src["id"]


def test_the_two_tracks_agree_and_the_status_says_by_how_much(both) -> None:  # type: ignore[no-untyped-def]
    root, _, case_id = both
    status = json.loads((root / "build" / "dealii" / case_id / "status.json").read_text())
    agreement = status["agreement"]["dolfinx"]
    assert 0 <= agreement["distance"] <= agreement["bound"]


def test_a_disagreement_fails_the_build_naming_both_numbers(both, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    root, path, case_id = both
    build_dir = tmp_path / "build"
    shutil.copytree(root / "build", build_dir)
    other = build_dir / "dolfinx" / case_id / "calibration.npz"
    with np.load(other) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["u"] = arrays["u"] * 1.5
    np.savez(other, **arrays)
    [o] = build([path], BuildOptions(build_dir, "dealii", repeats=1, limits=Limits(timeout_sec=300)))
    assert o.status == "failed"
    assert "cross-track disagreement" in o.reason and "tau_acc" in o.reason and "differ by" in o.reason


def _evaluate(root: Path, submissions: Path, tmp_path: Path) -> dict:
    store = open_store(root / "build", "dealii")
    [v] = evaluate(EvalOptions(store=store, submissions=submissions, out=tmp_path / "out", track="dealii",
                               repeats=1))
    return v


def _submit(tmp_path: Path, case_id: str, source: str | bytes) -> Path:
    sub = tmp_path / "subs" / case_id
    sub.mkdir(parents=True)
    (sub / "solver.cpp").write_bytes(source.encode() if isinstance(source, str) else source)
    return tmp_path / "subs"


def test_the_calibration_as_a_cpp_submission_passes_the_evaluator(both, track, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, _, case_id = both
    record = open_store(root / "build", "dealii").records[case_id]
    from casekit.evaluate.baselines import calibration_settings

    files = track.calibration_submission(calibration_settings(record), record["case_spec"])
    v = _evaluate(root, _submit(tmp_path, case_id, files["solver.cpp"]), tmp_path)
    assert v["failure"] is None and v["stage"] == "Pass", v


def test_a_compile_error_is_f_exec_with_the_compiler_s_first_errors(both, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, _, case_id = both
    v = _evaluate(root, _submit(tmp_path, case_id, "int main() { return undefined_name; }\n"), tmp_path)
    assert v["stage"] == "F-Exec"
    assert v["failure"]["category"] == "compile_error"
    assert "undefined_name" in v["failure"]["message"]


def test_an_oversized_program_is_refused_before_it_is_copied_into_runs(both, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A binary padded to fill the run's working directory would make every run a setup error
    (the evaluator's failure, stopping the evaluation): it is this submission's compile_error."""
    root, _, case_id = both
    big = "static volatile char pad[136 << 20] = {1};\nint main() { return pad[12345]; }\n"
    v = _evaluate(root, _submit(tmp_path, case_id, big), tmp_path)
    assert v["stage"] == "F-Exec" and v["failure"]["category"] == "compile_error"
    assert "at most 128 MiB" in v["failure"]["message"]


WRONG_SHAPE = """#include <fstream>
#include <vector>
int main() {
  std::vector<double> v(7, 0.0);  // the grid has 25 x 25 points
  std::ofstream("solution_grid.bin", std::ios::binary).write(reinterpret_cast<const char*>(v.data()), 56);
  std::ofstream("meta.json") << "{\\"wall_time_sec\\": 0.0, \\"status\\": \\"ok\\"}";
}
"""


def test_a_wrongly_shaped_output_is_an_invalid_artifact(both, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, _, case_id = both
    v = _evaluate(root, _submit(tmp_path, case_id, WRONG_SHAPE), tmp_path)
    assert v["stage"] == "F-Exec"
    assert v["failure"]["category"] == "invalid_artifact"
    assert "56 bytes" in v["failure"]["message"]


def test_the_output_adapter_reads_one_binary_or_one_per_component(tmp_path: Path) -> None:
    """No deal.II needed: the adapter alone, for a vector output with named components."""
    from casekit.scoring.artifacts import ArtifactError

    t = TRACKS.get("dealii")
    spec = {"eval_grid": {"type": "uniform", "nx": 4, "ny": 3, "bbox": [0, 1, 0, 1]},
            "output": {"field": "velocity", "components": ["ux", "uy"]}}
    a, b = np.arange(12.0).reshape(3, 4), -np.arange(12.0).reshape(3, 4)
    together = tmp_path / "together"
    together.mkdir()
    np.concatenate([a.ravel(), b.ravel()]).tofile(together / "solution_grid.bin")
    apart = tmp_path / "apart"
    apart.mkdir()
    a.tofile(apart / "solution_grid_ux.bin")
    b.tofile(apart / "solution_grid_uy.bin")
    for d in (together, apart):
        t.adapt_output(d, spec)
        with np.load(d / "solution.npz") as z:
            assert np.array_equal(z["ux"], a) and np.array_equal(z["uy"], b) and z["x"].shape == (4,)
    short = tmp_path / "short"
    short.mkdir()
    a.tofile(short / "solution_grid_ux.bin")
    b[:2].tofile(short / "solution_grid_uy.bin")
    with pytest.raises(ArtifactError) as err:
        t.adapt_output(short, spec)
    assert "solution_grid_uy.bin has 64 bytes" in err.value.message and "needs 96" in err.value.message
