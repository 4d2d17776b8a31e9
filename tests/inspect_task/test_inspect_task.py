"""The Inspect AI task end to end with Inspect's mock model, offline: a calibration solver passes, a
wrong one fails accuracy, with the verdicts ``casekit evaluate`` gives the same code; the feedback
loop feeds a failed attempt back -- the verdict alone, not the task again -- and scores the next;
the headline is the first attempt's pass rate, as ``casekit report``'s."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, get_model

from casekit.build.run import build
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.inspect import benchmark, extract_code
from casekit.inspect.mock import estimate_tokens, is_mock
from casekit.report.render import report_data
from tests.build.test_build import coarse, opts, write_case

pytestmark = pytest.mark.dolfinx


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No tiktoken table can be downloaded: the mock model must count tokens without one."""
    import tiktoken

    def refuse(name: str) -> None:
        raise ConnectionError(f"no network: tiktoken cannot download {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", refuse)


def _answer(code: str) -> ModelOutput:
    # no usage given: the mock model counts the tokens itself, as for its default answer
    return ModelOutput.from_content("mockllm/model", f"Here is my solver.\n\n```python\n{code}\n```\nDone.")


def _eval(cases: Path, out: Path, answers: list[str] | None, attempts: int = 1) -> EvalLog:
    model = get_model("mockllm/model", memoize=False,
                      **({"custom_outputs": [_answer(a) for a in answers]} if answers is not None else {}))
    [log] = inspect_eval(benchmark(cases=str(cases), track="dolfinx", repeats=1, attempts=attempts, out=str(out)),
                         model=model, log_dir=str(out / "logs"), display="none")
    assert log.status == "success", log.error
    return log


def _run(cases: Path, out: Path, answers: list[str], attempts: int = 1) -> list:
    return [next(iter((s.scores or {}).values())) for s in _eval(cases, out, answers, attempts).samples or []]


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
        mark = "C" if stage == "Pass" else "I"
        assert score.value == {"first_attempt": mark, "pass_at_k": mark} and score.answer == stage


def test_the_feedback_loop_sends_the_verdict_alone_and_the_headline_is_the_first_attempt(built: Path) -> None:
    zero, calibration = _code(built, "zero"), _code(built, "calibration")
    out = built / "inspect-feedback"
    log = _eval(built / "build", out, [zero, calibration], attempts=2)
    [sample] = log.samples or []
    [score] = (sample.scores or {}).values()
    assert score.metadata["attempts"] == 2 and score.answer == "Pass"
    assert score.value == {"first_attempt": "I", "pass_at_k": "C"}
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert [v["stage"] for v in verdicts] == ["F-Acc", "Pass"]
    # the chat: the task once, the first answer, the verdict alone, the second answer
    roles = [m.role for m in sample.messages]
    assert roles == ["user", "assistant", "user", "assistant"], roles
    task, turn = sample.messages[0].text, sample.messages[2].text
    assert "Attempt 2 of 2" in turn and f"{verdicts[0]['error']:.3e}" in turn  # the verdict: its error
    assert zero.strip() not in turn and "case_spec (authoritative)" not in turn
    assert len(turn) < len(task) / 5, (len(turn), len(task))
    # the headline metric is casekit report's first-attempt pass rate, pass@k beside it
    headline, beside = (log.results.scores if log.results else [])[:2]
    data = report_data(verdicts, [str(out)])
    [system] = data["systems"]
    first = next(s for s in data["sections"] if s["key"] is None)
    assert (headline.name, beside.name) == ("first_attempt", "pass_at_k")
    assert headline.metrics["accuracy"].value == first["rows"][0]["cells"][0]["rate"] == 0.0
    assert beside.metrics["accuracy"].value == data["pass_at_k"][system]["2"] == 1.0


def test_the_mock_model_runs_offline_with_its_default_answer(built: Path) -> None:
    """The README's ``inspect eval casekit/benchmark -T cases=build --model mockllm/model``: the
    mock model's default answer holds no code, so the case is F-Exec, and the run succeeds."""
    [score] = _eval(built / "build", built / "inspect-default", None).samples[0].scores.values()  # type: ignore
    assert score.answer == "F-Exec" and score.value == {"first_attempt": "I", "pass_at_k": "I"}


def test_a_task_that_cannot_start_says_why_in_one_line(tmp_path: Path, built: Path) -> None:
    with pytest.raises(PrerequisiteError, match=r"^casekit/benchmark: .* holds no built cases"):
        benchmark(cases=str(tmp_path))
    with pytest.raises(PrerequisiteError, match=r"unknown track 'nope'.*dolfinx"):
        benchmark(cases=str(built / "build"), track="nope")
    with pytest.raises(PrerequisiteError, match="unknown tier"):
        benchmark(cases=str(built / "build"), tier="feedback")


def test_only_the_mock_model_counts_tokens_locally() -> None:
    assert is_mock("mockllm/model") and not is_mock("openai/gpt-4o")
    assert asyncio.run(estimate_tokens("")) == 1 and asyncio.run(estimate_tokens("x" * 400)) == 100


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
