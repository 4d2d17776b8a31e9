"""The case source: what an author writes under ``cases/<family>/<id>.yaml``.

Schema: ``schemas/case_source.schema.json``.  A manufactured case gives
``manufactured_solution`` and casekit derives forcing, boundary and initial data from it; a
case without one gives ``pde.forcing``, the boundary ``value`` s, ``initial`` data and a
``reference`` recipe (the numerical reference levels).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from casekit import yamlio
from casekit.errors import CasekitError
from casekit.model.base import Model

Expression = float | int | str
FieldValue = Expression | list[Expression]


@dataclass
class DomainRef(Model):
    template: str
    params: dict[str, Any] | None = None


@dataclass
class TimeInterval(Model):
    t0: float
    t_end: float
    dt: float | None = None


@dataclass
class PdeSource(Model):
    params: dict[str, FieldValue] | None = None
    forcing: dict[str, FieldValue] | None = None
    time: TimeInterval | None = None


@dataclass
class BoundarySpec(Model):
    """The condition on one boundary tag; written ``tag: dirichlet`` when only the kind is
    given, else as a mapping."""

    kind: str
    alpha: float | None = None
    value: FieldValue | None = None
    laplacian: Expression | None = None

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        if isinstance(data, str):
            return cls(kind=data)
        return super().from_dict(data)

    def to_dict(self) -> Any:  # type: ignore[override]
        out = super().to_dict()
        return out["kind"] if list(out) == ["kind"] and self.kind != "robin" else out


@dataclass
class GridSource(Model):
    nx: int
    ny: int
    nz: int | None = None
    bbox: list[float] | None = None


@dataclass
class OutputSource(Model):
    field: str


@dataclass
class TargetSource(Model):
    """One requested target value (``casekit.targets``): a name, a registered kind and the
    fields that kind takes."""

    name: str
    kind: str
    of: str | None = None
    boundary: str | None = None
    at: list[float] | None = None


@dataclass
class EvaluationConfig(Model):
    target_metric: str | None = None
    timeout_sec: float | None = None
    alpha_acc: float | None = None
    alpha_time: float | None = None
    tau_min: float | None = None


@dataclass
class ReferenceRecipe(Model):
    levels: list[dict[str, Any]]
    max_e_base: float | None = None


@dataclass
class CaseSource(Model):
    id: str
    family: str
    domain: DomainRef
    pde: PdeSource
    boundary: dict[str, BoundarySpec]
    eval_grid: GridSource
    output: OutputSource
    tracks: list[str]
    #: scalar quantities of interest asked for beside the field (casekit.targets)
    targets: list[TargetSource] | None = None
    notes: str | None = None
    design: dict[str, str] | None = None
    #: an imported case's anchor record, kept/repaired/replaced and why (never shown to agents)
    provenance: dict[str, str] | None = None
    #: the agent-visible id (salted authoring writes it; absent: derived from ``id``)
    public_id: str | None = None
    manufactured_solution: dict[str, FieldValue] | None = None
    initial: dict[str, FieldValue] | None = None
    evaluation: EvaluationConfig | None = None
    calibration: dict[str, Any] | None = None
    reference: ReferenceRecipe | None = None
    tags: list[str] | None = None
    #: where it was read from (not part of the file)
    path: Path | None = field(default=None, compare=False, repr=False)

    KEY_ORDER = (
        "id", "public_id", "family", "notes", "provenance", "design", "domain", "pde", "manufactured_solution",
        "initial", "boundary", "eval_grid", "output", "targets", "evaluation", "calibration", "reference", "tags",
        "tracks",
    )

    @property
    def manufactured(self) -> bool:
        return self.manufactured_solution is not None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.pop("path", None)
        return {k: out[k] for k in self.KEY_ORDER if k in out}

    def to_yaml(self) -> str:
        return yamlio.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        clean = {k: v for k, v in data.items() if k != "path"}
        return super().from_dict(clean)


def load_source(path: Path) -> CaseSource:
    """A case source read and checked against its schema (the first structural problem is an
    error naming the field), ready to derive from."""
    from casekit import schema

    data = load_source_dict(path)
    problems = [p for p in schema.validate(data, "case_source") if not p.message.startswith("unknown field")]
    if problems:
        p = problems[0]
        raise CasekitError(p.message, pointer=p.pointer, file=str(path),
                           case_id=data.get("id") if isinstance(data.get("id"), str) else None, valid=p.valid)
    return CaseSource.from_dict(data)


def load_source_dict(path: Path) -> dict[str, Any]:
    data = yamlio.load(path)
    if not isinstance(data, dict):
        raise CasekitError("a case source must be a YAML mapping", file=str(path))
    return data
