"""Croissant 1.0 metadata (with the Responsible-AI fields) for a packaged dataset, built with
mlcroissant's own Python API (so the context, types and structure are the library's, and a
dataset it cannot read is an error here, not for the user).

Every file of the dataset is declared: each set of cases' records and agent views
(:mod:`casekit.package.subsets`) as file objects, and the references, calibration fields, prompts,
schemas, each set's case specifications and further tracks' records as file sets.  The record
sets are named as the set's configurations: ``cases`` (``authored``) reads the records; ``agent``
(``authored_agent``) gives what an agent gets, one row per case and library -- the fields of the
agent view (:mod:`casekit.package.fields`: ``id``, ``case_spec`` as JSON text, ``target_library``)
and its ``prompt``.  mlcroissant cannot hand out a JSON object inside JSON lines as text, so an
agent row is the set's ``case_specs/<public id>.json`` joined by public id with the record set
``prompt_files`` (every ``prompts/<library>/<public id>.md``: library, prompt), which gives one row
per library the case has a prompt for -- exactly the set's agent views.
"""

from __future__ import annotations

import datetime
import warnings
from typing import Any

from casekit.errors import CasekitError
from casekit.package.fields import PROMPT, described
from casekit.package.subsets import Subset

#: file sets every set of cases shares: (id, glob, encoding formats, description); mlcroissant
#: reads a file's text only as text/plain, so the prompts name that format after markdown
FILE_SETS = (
    ("references", "references/*.npz", ("application/x-npz",),
     "Reference fields of the cases without a manufactured solution on their evaluation grids (compressed "
     "numpy npz, one array per output component); a manufactured case's reference is its hidden solution, "
     "in cases.jsonl, sampled on the grid at evaluation."),
    ("calibration", "calibration/*/*.npz", ("application/x-npz",),
     "The calibration solver's field on the grid, per track (what e_base was measured from)."),
    ("prompts", "prompts/*/*.md", ("text/markdown", "text/plain"),
     "The single-tier prompt of each case for each library, named by the case's public id."),
    ("schemas", "schemas/*.schema.json", ("application/schema+json",), "JSON Schemas of every data contract."),
    ("tracks", "tracks/*.jsonl", ("application/jsonlines",), "Evaluator records of the tracks after the first."),
)
#: a case's public id, as it names the files of a case (idempotent: mlcroissant applies a join
#: key's transform twice)
PUBLIC_ID = r"^(?:.*/)?(case-[0-9a-f]{16})(?:\.(?:md|json))?$"
#: the library of a prompt file, from its path
LIBRARY = r"^(?:.*/)?prompts/([a-z][a-z0-9_]*)/case-[0-9a-f]{16}\.md$"


def file_sets(subsets: list[Subset]) -> tuple[tuple[str, str, tuple[str, ...], str], ...]:
    """:data:`FILE_SETS` and, per set of cases, its case specifications and (a further set) its
    further tracks' records."""
    out = list(FILE_SETS)
    for s in subsets:
        what = f" of the set {s.name!r}" if s.name else ""
        out.append((s.file_set("case_specs"), f"{s.case_specs_dir}/*.json", ("text/plain", "application/json"),
                    f"The case_spec of each case{what} as JSON text, named by the case's public id (the same "
                    "object as in the agent views and the prompts)."))
        if s.name:
            out.append((s.file_set("tracks"), f"{s.prefix}tracks/*.jsonl", ("application/jsonlines",),
                        f"Evaluator records of the set {s.name!r} on the tracks after the first."))
    return tuple(out)


def croissant(name: str, version: str, description: str, files: dict[str, str], counts: dict[str, Any],
              license_url: str, url: str | None, date: str | None = None,
              present: tuple[str, ...] = (), *, subsets: list[Subset]) -> dict[str, Any]:
    """``files``: path -> sha256 of the sets' JSONL files (records and agent views); ``present``:
    the file sets (ids of :func:`file_sets` of ``subsets``) the dataset has; ``subsets``: the sets
    of cases, the main one first."""
    import mlcroissant as mlc

    text = mlc.DataType.TEXT

    def column(rid: str, fname: str, doc: str, file: str, col: str, json_path: str | None,
               dtype: Any = text) -> Any:
        source = mlc.Source(file_object=file, extract=mlc.Extract(column=col),
                            transforms=[mlc.Transform(json_path=json_path)] if json_path else [])
        return mlc.Field(id=f"{rid}/{fname}", name=fname, description=doc, data_types=[dtype], source=source)

    def of_files(rid: str, fname: str, doc: str, file_set: str, prop: str, regex: str | None = None,
                 references: str | None = None) -> Any:
        source = mlc.Source(file_set=file_set, extract=mlc.Extract(file_property=prop),
                            transforms=[mlc.Transform(regex=regex)] if regex else [])
        return mlc.Field(id=f"{rid}/{fname}", name=fname, description=doc, data_types=[text], source=source,
                         references=mlc.Source(field=references) if references else None)

    def joined(rid: str, fname: str, doc: str, field: str) -> Any:
        return mlc.Field(id=f"{rid}/{fname}", name=fname, description=doc, data_types=[text],
                         source=mlc.Source(field=field))

    distribution: list[Any] = [
        mlc.FileObject(id=path, name=path, content_url=path, encoding_formats=["application/jsonlines"], sha256=digest)
        for path, digest in sorted(files.items())
    ]
    distribution += [mlc.FileSet(id=fid, name=fid, includes=[glob], encoding_formats=list(fmts), description=doc)
                     for fid, glob, fmts, doc in file_sets(subsets) if fid in present]

    def cases(s: Subset) -> Any:
        rid, file = s.records_config(s.tracks[0]), s.records_file(s.tracks[0])
        what = f" of the set {s.name!r}" if s.name else ""
        return mlc.RecordSet(
            id=rid, name=rid,
            description=f"Evaluator-side case records{what}: case_spec, thresholds, calibration and provenance.",
            fields=[column(rid, "id", "Case id.", file, "id", None),
                    column(rid, "public_id", "The opaque id agents see.", file, "public_id", None),
                    column(rid, "equation_family", "PDE family.", file, "pde_classification", "$.equation_family"),
                    column(rid, "domain", "Domain template.", file, "case_spec", "$.domain.type"),
                    column(rid, "tau_acc", "Accuracy threshold.", file, "evaluation_metadata",
                           "$.thresholds.tau_acc", mlc.DataType.FLOAT),
                    column(rid, "tau_time", "Runtime threshold (seconds).", file, "evaluation_metadata",
                           "$.thresholds.tau_time", mlc.DataType.FLOAT)])

    view = described("agent")
    prompt_files = mlc.RecordSet(
        id="prompt_files", name="prompt_files",
        description="Every rendered prompt: the case's public id, the library and the prompt (the agent record "
                    "sets join it with their cases' specifications).",
        fields=[of_files("prompt_files", "id", view["id"], "prompts", "filename", PUBLIC_ID),
                of_files("prompt_files", "target_library", view["target_library"], "prompts", "filepath", LIBRARY),
                of_files("prompt_files", "prompt", PROMPT, "prompts", "content")])

    def agent(s: Subset) -> Any:
        rid, specs = s.agent_config, s.file_set("case_specs")
        what = f" of the set {s.name!r}" if s.name else ""
        sources = {"id": lambda doc: of_files(rid, "id", doc, specs, "filename", PUBLIC_ID, "prompt_files/id"),
                   "case_spec": lambda doc: of_files(rid, "case_spec", f"{doc} (JSON text)", specs, "content"),
                   "target_library": lambda doc: joined(rid, "target_library", doc, "prompt_files/target_library")}
        unmapped = sorted(set(view) - set(sources))
        if unmapped:
            raise CasekitError(f"the agent view's {', '.join(unmapped)} has no Croissant field",
                               valid="a source for it in casekit.package.croissant")
        return mlc.RecordSet(
            id=rid, name=rid,
            description=f"What an agent is given{what}, one row per case and library: the agent view (public id, "
                        "case_spec, target library) and its prompt.",
            fields=[*(sources[k](doc) for k, doc in view.items()),
                    joined(rid, "prompt", PROMPT, "prompt_files/prompt")])

    with_prompts = [s for s in subsets if {"prompts", s.file_set("case_specs")} <= set(present)]
    sets = [*map(cases, subsets), *([prompt_files] if with_prompts else []), *map(agent, with_prompts)]
    families = ", ".join(f"{k} {v}" for k, v in sorted(counts.get("families", {}).items()))
    metadata = mlc.Metadata(
        name=name, description=description, version=version, license=[license_url], url=url,
        cite_as=f"{name} {version}, built with casekit", conforms_to=["http://mlcommons.org/croissant/1.0"],
        keywords=["benchmark", "PDE", "finite element", "LLM agents", "scientific computing"],
        date_published=datetime.datetime.fromisoformat(date) if date else None,
        distribution=distribution, record_sets=sets,
        data_collection="Synthetic: every case is authored from a sampled design point; forcing, boundary and "
                        "initial data are derived symbolically from manufactured solutions, or references are "
                        "computed by refined finite-element solves.",
        data_collection_type=["Software Collection"],
        data_preprocessing_protocol=["Static validation (schemas, residual of the strong form, leak checks), "
                                     "meshing, reference and calibration solves, trial execution of the calibration "
                                     "solver and of trivial cheater submissions."],
        data_limitations=["Cases cover the families, domains and regimes of the design matrix only; runtime "
                          "thresholds are relative to the calibration solver timed beside each submission."],
        data_biases=[f"The design matrix over-represents smooth manufactured solutions; per-family counts: "
                     f"{families}."],
        data_use_cases=["Evaluating agents that write finite-element solvers; not for training on the references "
                        "of the test cases."],
        data_social_impact="Measures a scientific-computing skill; no people are described or affected.",
        personal_sensitive_information=["None: the data are synthetic mathematics."],
        data_release_maintenance_plan="Semantic versioning: new cases are minor releases; changed references, "
                                      "grids, thresholds or contracts are major.",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        issues = metadata.issues
    if issues.errors:
        raise CasekitError("the Croissant metadata is invalid: " + "; ".join(sorted(issues.errors))[:2000])
    out: dict[str, Any] = metadata.to_json()
    return out
