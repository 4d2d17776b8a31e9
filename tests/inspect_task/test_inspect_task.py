"""The Inspect AI task end to end with Inspect's mock model: a calibration solver passes, a wrong
one fails accuracy, with the verdicts ``casekit evaluate`` gives the same code; the feedback loop
feeds a failed attempt back and scores the next."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from casekit.build.run import build
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.inspect import benchmark, extract_code
from tests.build.test_build import coarse, opts, write_case

pytestmark = pytest.mark.dolfinx


def _answer(code: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", f"Here is my solver.\n\n```python\n{code}\n```\nDone.")
    # usage given, so the mock model does not count tokens with tiktoken (which downloads its tables)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


def _run(cases: Path, out: Path, answers: list[str], attempts: int = 1) -> list:
    model = get_model("mockllm/model", custom_outputs=[_answer(a) for a in answers], memoize=False)
    [log] = inspect_eval(benchmark(cases=str(cases), track="dolfinx", repeats=1, attempts=attempts, out=str(out)),
                         model=model, log_dir=str(out / "logs"), display="none")
    assert log.status == "success", log.error
    return [next(iter((s.scores or {}).values())) for s in log.samples or []]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inspect")
    [o] = build([write_case(root, coarse("poisson", "unit_square", bc="mixed"))], opts(root / "build"))
    assert o.status == "built", o.reason
    write_baselines(open_store(root / "build", "dolfinx"), root / "base", ("calibration", "zero"), "dolfinx")
    return root


def _code(root: Path, kind: str) -> str:
    [path] = (root / "base" / kind).glob("*/solver.py")
    return path.read_text()


def test_inspect_verdicts_are_casekit_evaluates(built: Path) -> None:
    store = open_store(built / "build", "dolfinx")
    for kind, stage in (("calibration", "Pass"), ("zero", "F-Acc")):
        [score] = _run(built / "build", built / f"inspect-{kind}", [_code(built, kind)])
        v = score.metadata["verdict"]
        [direct] = evaluate(EvalOptions(store, built / "base" / kind, built / f"direct-{kind}", repeats=1))
        assert v["stage"] == direct["stage"] == stage
        assert v["error"] == pytest.approx(direct["error"], rel=1e-12)
        assert score.value == ("C" if stage == "Pass" else "I") and score.answer == stage


def test_the_feedback_loop_feeds_a_failure_back_and_scores_the_next_attempt(built: Path) -> None:
    [score] = _run(built / "build", built / "inspect-feedback", [_code(built, "zero"), _code(built, "calibration")],
                   attempts=2)
    assert score.metadata["attempts"] == 2 and score.answer == "Pass"
    stages = [v["stage"] for v in map(__import__("json").loads,
                                      (built / "inspect-feedback" / "verdicts.jsonl").read_text().splitlines())]
    assert stages == ["F-Acc", "Pass"]


def test_the_code_is_taken_from_the_block_that_defines_the_entry_point() -> None:
    text = "Plan:\n```python\nimport numpy\n```\nSolver:\n```python\ndef solve(case_spec):\n    pass\n```\n"
    assert extract_code(text, "python").startswith("def solve")
    assert extract_code("no code at all", "python") == ""
    assert "int main" in extract_code("```cpp\nint main() { return 0; }\n```", "cpp")


def test_the_thresholds_variant_reaches_the_prompt_the_feedback_and_the_verdict(built: Path) -> None:
    """``-T state_thresholds=true``: the first prompt and the feedback state the case's tau_acc,
    and every verdict records the thresholds variant (off by default: standard)."""
    import json

    record = next(iter(open_store(built / "build", "dolfinx").records.values()))
    tau = f"{record['evaluation_metadata']['thresholds']['tau_acc']:.6g}"
    out = built / "inspect-thresholds"
    task = benchmark(cases=str(built / "build"), track="dolfinx", repeats=1, attempts=2, out=str(out),
                     state_thresholds=True)
    [sample] = task.dataset
    assert tau in str(sample.input) and task.metadata["prompt_variant"] == "thresholds"
    model = get_model("mockllm/model", custom_outputs=[_answer(_code(built, "zero")), _answer(_code(built, "zero"))],
                      memoize=False)
    [log] = inspect_eval(task, model=model, log_dir=str(out / "logs"), display="none")
    assert log.status == "success", log.error
    [s] = log.samples or []
    feedback = [m for m in s.messages if m.role == "user"][1].text
    assert "(the threshold: " + tau + ")" in feedback
    variants = {json.loads(line)["prompt_variant"] for line in (out / "verdicts.jsonl").read_text().splitlines()}
    assert variants == {"thresholds"}
    plain = benchmark(cases=str(built / "build"), track="dolfinx", repeats=1, out=str(built / "inspect-plain"))
    assert tau not in str(plain.dataset[0].input) and plain.metadata["prompt_variant"] == "standard"
