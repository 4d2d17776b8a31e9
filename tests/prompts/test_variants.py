"""The thresholds prompt variant (issue 30): off by default; on, every tier that describes the
evaluation states tau_acc, the targets' thresholds and the runtime rule numerically; verdicts
record the variant their submissions were written from, a journal never mixes two for one
system, and casekit report shows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit.cli import app
from casekit.prompts import render
from casekit.prompts.variants import VARIANTS, StatedThresholds, variant_of
from tests.prompts.test_prompts import CASES, spec_and_hidden

REPO = Path(__file__).resolve().parents[2]
STATED = StatedThresholds(tau_acc=0.00123456, alpha_time=3.0, t_base=0.8125, targets=(("mean_u", 0.0042),))


def _verdict(stage: str = "F-Acc") -> dict:
    return {"attempt": 1, "stage": stage, "error": 0.5, "runtime": {"median": 2.0, "max": 2.5, "runs": [2.0]},
            "timing": {"ratio": 4.25}, "stderr_tail": "", "failure": {"category": "accuracy", "message": ""}}


def test_the_thresholds_variant_states_the_numbers_and_the_standard_one_none() -> None:
    spec, _ = spec_and_hidden(CASES[0])
    for tier in ("single", "plan", "modelspecs", "feedback"):
        kw = {"verdict": _verdict(), "previous_code": "pass"} if tier == "feedback" else {}
        standard = render(spec, "dolfinx", tier, **kw)
        assert render(spec, "dolfinx", tier, thresholds=None, **kw) == standard  # off by default
        stated = render(spec, "dolfinx", tier, thresholds=STATED, **kw)
        for text in ("0.00123456", "at most 3 times the runtime of the reference", "took 0.812 s",
                     "`mean_u` at most 0.0042"):
            assert text in stated, (tier, text)
            assert text not in standard, (tier, text)
    slow = render(spec, "dolfinx", "feedback", verdict=_verdict("F-Time"), previous_code="pass", thresholds=STATED)
    assert "4.25 times the\nreference solver's run beside it, where at most 3 passes" in slow
    acc = render(spec, "dolfinx", "feedback", verdict=_verdict(), previous_code="pass", thresholds=STATED)
    assert "was 5.000e-01 (the threshold: 0.00123456)" in acc


def test_the_stated_numbers_are_the_records() -> None:
    record = {"case_spec": {"targets": [{"name": "mean_u", "kind": "mean"}]},
              "evaluation_config": {"alpha_time": 3.0},
              "evaluation_metadata": {"thresholds": {"tau_acc": 2e-3, "tau_time": 2.4}, "t_base": 0.8,
                                      "targets": {"mean_u": {"value": 1.0, "e_base": 1e-4, "tau": 3e-3}}}}
    assert StatedThresholds.of_record(record) == StatedThresholds(2e-3, 3.0, 0.8, (("mean_u", 3e-3),))


def test_the_verdict_schema_knows_every_variant() -> None:
    schema = json.loads((REPO / "schemas" / "verdict.schema.json").read_text())
    assert schema["properties"]["prompt_variant"]["enum"] == list(VARIANTS)
    assert "prompt_variant" not in schema["required"]  # verdicts written before variants stay valid
    assert variant_of({}) == "standard"


def test_state_thresholds_needs_the_built_record() -> None:
    r = CliRunner().invoke(app, ["prompt", str(CASES[0]), "--state-thresholds"])
    assert r.exit_code == 2 and "--cases" in r.output and "Traceback" not in r.output


@pytest.mark.dolfinx
def test_prompt_evaluate_and_report_carry_the_variant(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from casekit.errors import UsageError
    from casekit.evaluate.baselines import write_baselines
    from casekit.evaluate.run import EvalOptions, evaluate
    from casekit.report.render import report_data, tables
    from tests.helpers import record

    rec = record(store, "poisson")
    tau = rec["evaluation_metadata"]["thresholds"]["tau_acc"]
    r = CliRunner().invoke(app, ["prompt", rec["id"], "--cases", str(store.root), "--state-thresholds"])
    assert r.exit_code == 0, r.output
    assert f"{tau:.6g}" in r.output
    r = CliRunner().invoke(app, ["prompt", rec["id"], "--cases", str(store.root)])
    assert f"{tau:.6g}" not in r.output

    write_baselines(store, tmp_path / "base", ("zero",), "dolfinx")
    subs = tmp_path / "base" / "zero"
    verdicts = evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1, system="zero-t",
                                    prompt_variant="thresholds"))
    assert verdicts and {v["prompt_variant"] for v in verdicts} == {"thresholds"}
    with pytest.raises(UsageError, match="written from thresholds prompts"):
        evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1, system="zero-t"))
    standard = evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1, system="zero-s"))
    assert {v["prompt_variant"] for v in standard} == {"standard"}

    data = report_data(verdicts + standard, ["verdicts.jsonl"])
    assert data["prompt_variants"] == {"zero-s": ["standard"], "zero-t": ["thresholds"]}
    title, header, rows = tables(data)[0]
    assert "Prompt variant" in title and header[1:] == ["zero-s", "zero-t"] and rows == [["prompt", "standard",
                                                                                         "thresholds"]]
    r = CliRunner().invoke(app, ["report", str(tmp_path / "out")])
    assert r.exit_code == 0 and "thresholds" in r.output and "standard" in r.output
