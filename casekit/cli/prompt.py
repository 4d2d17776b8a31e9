"""``casekit prompt``: what an agent is given for a case."""

from __future__ import annotations

from pathlib import Path

import typer

from casekit.cli.app import Output, app, json_option
from casekit.errors import UsageError


def record_of(case: str, cases: Path, library: str = "dolfinx") -> dict:
    """The built record of ``case`` (descriptive or public id) in a build or dataset
    (``library``'s records first, then every other track's)."""
    from casekit.evaluate.store import find_case as find_built

    store, case_id = find_built(cases, case, library)
    return store.records[case_id]  # type: ignore[no-any-return]


def case_spec_of(case: str, cases: Path | None, library: str = "dolfinx") -> tuple[str, dict]:
    """(descriptive id, case_spec) of a case named by a source file or by its descriptive or
    public id: among the case sources, or with ``cases`` in a build or dataset (``library``'s
    records first, then every other track's)."""
    if cases is not None:
        record = record_of(case, cases, library)
        return record["id"], record["case_spec"]
    from casekit.cli.author import find_case
    from casekit.derive import derive
    from casekit.model.source import load_source

    source = load_source(find_case(case))
    return source.id, derive(source).case_spec()


@app.command()
def prompt(
    case: str = typer.Argument(..., help="A case source (file or id under cases/), or a case id with --cases."),
    library: str = typer.Option("dolfinx", "--library", "-l", help="The target library: a track's name "
                                "(casekit env check lists them)."),
    tier: str = typer.Option("single", "--tier", help="single, feedback, scaffold, plan or modelspecs "
                             "(FEABench's structured specification)."),
    cases: Path | None = typer.Option(None, "--cases", help="A build or dataset holding the case."),
    verdict: Path | None = typer.Option(None, "--verdict", help="verdicts.jsonl with the previous attempt "
                                        "(feedback tier)."),
    system: str | None = typer.Option(None, "--system", help="The system whose previous attempt the feedback "
                                      "answers (needed when --verdict holds several)."),
    code: Path | None = typer.Option(None, "--code", help="The previous attempt's code (default: the copy the "
                                     "evaluator kept)."),
    out: Path | None = typer.Option(None, "--out", help="Write the text here instead of printing it."),
    state_thresholds: bool = typer.Option(False, "--state-thresholds", help="The thresholds variant: state the "
                                          "case's accuracy threshold (and its targets') and the runtime rule "
                                          "numerically (off by default, as in the PDEAgent-Bench paper; needs the "
                                          "built record: --cases)."),
    as_json: bool = json_option("the prompt with its case, library, tier and sha256"),
) -> None:
    """Render the prompt of a tier (deterministic: same case and library, same bytes)."""
    from casekit.jsonio import atomic_write_text, iter_jsonl
    from casekit.prompts import previous_verdict, prompt_hash, render
    from casekit.prompts.variants import StatedThresholds

    thresholds = None
    if state_thresholds:
        if cases is None:
            raise UsageError("--state-thresholds states the built case's thresholds: name the build or dataset "
                             "that holds it", valid="--cases BUILD_OR_DATASET")
        thresholds = StatedThresholds.of_record(record_of(case, cases, library))
    case_id, spec = case_spec_of(case, cases, library)
    previous = None
    last = None
    if tier == "feedback":
        if verdict is None:
            raise UsageError("the feedback tier needs --verdict")
        last = previous_verdict((v for _, v in iter_jsonl(verdict)), case_id, library, system, str(verdict))
        from casekit.tracks import TRACKS

        name = TRACKS.get(library).submission_files[0]
        path = code or Path(last["paths"].get("submission", "")) / name
        if not path.is_file():
            raise UsageError(f"the previous code is not at {path}", valid="--code FILE")
        previous = path.read_text()
    text = render(spec, library, tier, verdict=last, previous_code=previous, thresholds=thresholds)
    shown = Output(as_json)
    if out is not None:
        atomic_write_text(out, text)
        shown.say(f"wrote {out} (sha256 {prompt_hash(text)[:16]})")
    elif not as_json:
        shown.say(text)
    shown.result({"case_id": case_id, "library": library, "tier": tier, "sha256": prompt_hash(text),
                  "prompt_variant": "thresholds" if thresholds is not None else "standard",
                  "out": str(out) if out is not None else None, "prompt": text})
