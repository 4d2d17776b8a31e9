"""Typed in-memory model of casekit's data contracts (case source, case record, agent view)."""

from casekit.model.record import AgentView, CaseRecord, EvaluationMetadata, PdeClassification, Thresholds
from casekit.model.source import BoundarySpec, CaseSource, EvaluationConfig

__all__ = [
    "AgentView",
    "BoundarySpec",
    "CaseRecord",
    "CaseSource",
    "EvaluationConfig",
    "EvaluationMetadata",
    "PdeClassification",
    "Thresholds",
]
