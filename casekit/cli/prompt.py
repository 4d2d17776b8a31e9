"""``casekit prompt``: what an agent is given for a case."""

from __future__ import annotations

from pathlib import Path

import typer

from casekit.cli.app import app, console
from casekit.errors import UsageError


def record_of(case: str, cases: Path, library: str = "dolfinx") -> dict:
    """The built record of ``case`` (descriptive or public id) in a build or dataset."""
    from casekit.evaluate.store import open_store

    store = open_store(cases, library)
    case_id = store.resolve(case)
    if case_id is None:
        raise UsageError(f"no case {case!r} in {cases} for the {library} track")
    return store.records[case_id]  # type: ignore[no-any-return]


def case_spec_of(case: str, cases: Path | None, library: str = "dolfinx") -> tuple[str, dict]:
    """(id, case_spec) from a case source file or id, or from a record in a build/dataset."""
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
    if out is not None:
        atomic_write_text(out, text)
        console.print(f"wrote {out} (sha256 {prompt_hash(text)[:16]})")
    else:
        console.print(text, markup=False, highlight=False, soft_wrap=True)
