"""Croissant 1.0 metadata (with the Responsible-AI fields) for a packaged dataset, built with
mlcroissant's own Python API (so the context, types and structure are the library's, and a
dataset it cannot read is an error here, not for the user).

Every file of the dataset is declared: each set of cases' records and agent views
(:mod:`casekit.package.subsets`) as file objects with their record sets (named as the set's
configurations: ``cases``, ``agent``, ``authored``, ``authored_agent``), and the references,
calibration fields, prompts, schemas and further tracks' records as file sets.
"""

from __future__ import annotations

import datetime
import warnings
from typing import Any

from casekit.errors import CasekitError
from casekit.package.subsets import Subset

#: file sets of a packaged dataset: (id, glob, encoding format, description)
FILE_SETS = (
    ("references", "references/*.npz", "application/x-npz",
     "Reference fields of the cases without a manufactured solution on their evaluation grids (compressed "
     "numpy npz, one array per output component); a manufactured case's reference is its hidden solution, "
     "in cases.jsonl, sampled on the grid at evaluation."),
    ("calibration", "calibration/*/*.npz", "application/x-npz",
     "The calibration solver's field on the grid, per track (what e_base was measured from)."),
    ("prompts", "prompts/*/*.md", "text/markdown",
     "The single-tier prompt of each case for each library, named by the case's public id."),
    ("schemas", "schemas/*.schema.json", "application/schema+json", "JSON Schemas of every data contract."),
    ("tracks", "tracks/*.jsonl", "application/jsonlines", "Evaluator records of the tracks after the first."),
)


def file_sets(subsets: list[Subset]) -> tuple[tuple[str, str, str, str], ...]:
    """:data:`FILE_SETS` and, per further set of cases, its further tracks' records."""
    return FILE_SETS + tuple((f"{s.name}_tracks", f"{s.name}/tracks/*.jsonl", "application/jsonlines",
                              f"Evaluator records of the set {s.name!r} on the tracks after the first.")
                             for s in subsets if s.name)


def croissant(name: str, version: str, description: str, files: dict[str, str], counts: dict[str, Any],
              license_url: str, url: str | None, date: str | None = None,
              present: tuple[str, ...] = (), record_sets: list[tuple[str, str, str]] | None = None,
              subsets: list[Subset] | None = None) -> dict[str, Any]:
    """``files``: path -> sha256 of the JSONL files described as record sets; ``record_sets``:
    (record set id, its file, ``cases`` or ``agent``), by default ``cases.jsonl`` and
    ``agent.jsonl``; ``present``: the file sets (ids of :func:`file_sets` of ``subsets``) the
    dataset has."""
    import mlcroissant as mlc

    record_sets = record_sets or [("cases", "cases.jsonl", "cases"), ("agent", "agent.jsonl", "agent")]
    file_of = {rid: path for rid, path, _ in record_sets}

    def field(record_set: str, fname: str, doc: str, column: str, json_path: str | None,
              dtype: Any = mlc.DataType.TEXT) -> Any:
        source = mlc.Source(file_object=file_of[record_set], extract=mlc.Extract(column=column),
                            transforms=[mlc.Transform(json_path=json_path)] if json_path else [])
        return mlc.Field(id=f"{record_set}/{fname}", name=fname, description=doc, data_types=[dtype], source=source)

    distribution: list[Any] = [
        mlc.FileObject(id=path, name=path, content_url=path, encoding_formats=["application/jsonlines"], sha256=digest)
        for path, digest in sorted(files.items())
    ]
    distribution += [mlc.FileSet(id=fid, name=fid, includes=[glob], encoding_formats=[fmt], description=doc)
                     for fid, glob, fmt, doc in file_sets(subsets or []) if fid in present]

    def cases(rid: str) -> Any:
        what = "" if rid == "cases" else f" of the set {rid!r}"
        return mlc.RecordSet(
            id=rid, name=rid,
            description=f"Evaluator-side case records{what}: case_spec, thresholds, calibration and provenance.",
            fields=[field(rid, "id", "Case id.", "id", None),
                    field(rid, "public_id", "The opaque id agents see.", "public_id", None),
                    field(rid, "equation_family", "PDE family.", "pde_classification", "$.equation_family"),
                    field(rid, "domain", "Domain template.", "case_spec", "$.domain.type"),
                    field(rid, "tau_acc", "Accuracy threshold.", "evaluation_metadata", "$.thresholds.tau_acc",
                          mlc.DataType.FLOAT),
                    field(rid, "tau_time", "Runtime threshold (seconds).", "evaluation_metadata",
                          "$.thresholds.tau_time", mlc.DataType.FLOAT)])

    def agent(rid: str) -> Any:
        what = "" if rid == "agent" else f" of the set {rid.removesuffix('_agent')!r}"
        return mlc.RecordSet(
            id=rid, name=rid,
            description=f"Agent views{what}: exactly what an agent is given (case_spec and target library).",
            fields=[field(rid, "id", "The case's public id.", "id", None),
                    field(rid, "target_library", "FEM library the agent must use.", "target_library", None),
                    field(rid, "pde_type", "PDE family.", "case_spec", "$.pde.type")])

    sets = [(cases if kind == "cases" else agent)(rid) for rid, _, kind in record_sets]
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
