"""The case record (evaluator side, one JSONL line; the paper's Appendix J) and the agent view.

Schemas: ``schemas/case_record.schema.json`` and ``schemas/agent_view.schema.json``.  The
``case_spec`` is kept as the schema-shaped dict it is (it is exactly what the agent sees);
``content_hash`` is the sha256 of the record's canonical JSON without ``content_hash``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from casekit import SCHEMA_VERSION
from casekit.jsonio import content_hash, dumps
from casekit.model.base import Model
from casekit.model.source import EvaluationConfig


@dataclass
class PdeClassification(Model):
    equation_family: str
    math_type: list[str]


@dataclass
class Thresholds(Model):
    tau_acc: float
    tau_time: float


@dataclass
class Refinement(Model):
    g01: float
    g12: float


@dataclass
class EvaluationMetadata(Model):
    construction_method: str
    reference_config: dict[str, Any]
    calibration_config: dict[str, Any]
    reference_path: str
    calibration_path: str
    thresholds: Thresholds
    e_base: float
    t_base: float
    environment: dict[str, Any]
    manufactured_solution: dict[str, Any] | None = None
    t_base_runs: list[float] | None = None
    refinement: Refinement | None = None
    track: str | None = None
    source_hash: str | None = None
    design: dict[str, str] | None = None
    provenance: dict[str, str] | None = None
    #: hidden: target name -> {value, e_base, tau, calibration} (casekit.targets)
    targets: dict[str, Any] | None = None


@dataclass
class CaseRecord(Model):
    id: str
    #: the opaque id agents see (``casekit.ids``); ``id`` is the maintainer's descriptive one
    public_id: str
    pde_classification: PdeClassification
    case_spec: dict[str, Any]
    evaluation_config: EvaluationConfig
    evaluation_metadata: EvaluationMetadata
    tags: list[str]
    supported_libraries: list[str]
    schema_version: str = SCHEMA_VERSION
    content_hash: str = ""

    def compute_hash(self) -> str:
        body = self.to_dict()
        body.pop("content_hash", None)
        return content_hash(body)

    def sealed(self) -> CaseRecord:
        """The record with its content hash filled in."""
        self.content_hash = self.compute_hash()
        return self

    def to_jsonl_line(self) -> str:
        return dumps(self.to_dict())

    def agent_view(self, library: str) -> AgentView:
        return AgentView(id=self.public_id, case_spec=self.case_spec, target_library=library)


@dataclass
class AgentView(Model):
    """Everything an agent is given: the case's opaque public id, the case_spec and the target
    library, nothing else."""

    id: str
    case_spec: dict[str, Any]
    target_library: str
