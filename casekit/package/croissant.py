"""Croissant 1.0 metadata (with the Responsible-AI fields) for a packaged dataset."""

from __future__ import annotations

from typing import Any

CONTEXT = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/", "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"}, "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/", "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract", "field": "cr:field", "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet", "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath", "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path",
    "recordSet": "cr:recordSet", "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated",
    "replace": "cr:replace", "sc": "https://schema.org/", "separator": "cr:separator", "source": "cr:source",
    "subField": "cr:subField", "transform": "cr:transform",
}


def _field(record_set: str, name: str, description: str, path: str, data_type: str = "sc:Text") -> dict[str, Any]:
    """A field read from a JSONL column (the top-level key of ``path``), then by JSONPath inside it."""
    column, _, rest = path.removeprefix("$.").partition(".")
    source: dict[str, Any] = {"fileObject": {"@id": f"{record_set}.jsonl"}, "extract": {"column": column}}
    if rest:
        source["transform"] = {"jsonPath": f"$.{rest}"}
    return {"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name, "description": description,
            "dataType": data_type, "source": source}


def croissant(name: str, version: str, description: str, files: dict[str, str], counts: dict[str, Any],
              license_url: str, url: str, date: str | None = None) -> dict[str, Any]:
    """``files``: path -> sha256 of the JSONL files described as record sets."""
    distribution = [
        {"@type": "cr:FileObject", "@id": f"{path.removesuffix('.jsonl')}.jsonl", "name": path,
         "contentUrl": path, "encodingFormat": "application/jsonlines", "sha256": digest}
        for path, digest in sorted(files.items())
    ]
    record_sets = [
        {"@type": "cr:RecordSet", "@id": "cases", "name": "cases",
         "description": "Evaluator-side case records: case_spec, thresholds, calibration and provenance.",
         "field": [_field("cases", "id", "Case id.", "$.id"),
                   _field("cases", "equation_family", "PDE family.", "$.pde_classification.equation_family"),
                   _field("cases", "domain", "Domain template.", "$.case_spec.domain.type"),
                   _field("cases", "tau_acc", "Accuracy threshold.", "$.evaluation_metadata.thresholds.tau_acc",
                          "sc:Float"),
                   _field("cases", "tau_time", "Runtime threshold (seconds).",
                          "$.evaluation_metadata.thresholds.tau_time", "sc:Float")]},
        {"@type": "cr:RecordSet", "@id": "agent", "name": "agent",
         "description": "Agent views: exactly what an agent is given (case_spec and target library).",
         "field": [_field("agent", "target_library", "FEM library the agent must use.", "$.target_library"),
                   _field("agent", "pde_type", "PDE family.", "$.case_spec.pde.type")]},
    ]
    meta: dict[str, Any] = {"datePublished": date} if date else {}
    return {
        "@context": CONTEXT,
        **meta,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": name,
        "description": description,
        "version": version,
        "license": license_url,
        "url": url,
        "citeAs": f"{name} {version}, built with casekit",
        "keywords": ["benchmark", "PDE", "finite element", "LLM agents", "scientific computing"],
        "isLiveDataset": False,
        "distribution": distribution,
        "recordSet": record_sets,
        "rai:dataCollection": "Synthetic: every case is authored from a sampled design point; forcing, boundary and "
                              "initial data are derived symbolically from manufactured solutions, or references are "
                              "computed by refined finite-element solves.",
        "rai:dataCollectionType": ["Software Collection"],
        "rai:dataPreprocessingProtocol": "Static validation (schemas, residual of the strong form, leak checks), "
                                         "meshing, reference and calibration solves, trial execution of the "
                                         "calibration solver and of trivial cheater submissions.",
        "rai:dataLimitations": "Cases cover the families, domains and regimes of the design matrix only; runtime "
                               "thresholds were measured on the recorded machine and scale with hardware.",
        "rai:dataBiases": "The design matrix over-represents smooth manufactured solutions; per-family counts: "
                          + ", ".join(f"{k} {v}" for k, v in sorted(counts.get("families", {}).items())) + ".",
        "rai:dataUseCases": "Evaluating agents that write finite-element solvers; not for training on the "
                            "references of the test cases.",
        "rai:dataSocialImpact": "Measures a scientific-computing skill; no people are described or affected.",
        "rai:personalSensitiveInformation": "None: the data are synthetic mathematics.",
        "rai:dataReleaseMaintenancePlan": "Semantic versioning: new cases are minor releases; changed references, "
                                          "grids, thresholds or contracts are major; old majors are kept two years.",
    }
