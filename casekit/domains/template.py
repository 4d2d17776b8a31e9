"""Domain templates: parameter schema, validity constraints, exact geometry, wording.

Each template lives in its own module under ``casekit/domains/templates`` and registers one
:class:`DomainTemplate` in :data:`DOMAINS`.  Everything that needs a domain -- meshing for every
track, masking of evaluation grids, validation, derivation of boundary data, prompt wording --
goes through :func:`resolve`, so adding a template touches one place.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from casekit.domains.geometry import Box, Geometry
from casekit.domains.geometry.carriers import clean
from casekit.errors import CasekitError, Problem, pointer_join
from casekit.registry import Registry

ParamSchema = dict[str, Any]


# --------------------------------------------------------------------------- parameter helpers
def number(default: float, doc: str, **bounds: float) -> ParamSchema:
    """A real parameter; bounds use JSON Schema names (minimum, exclusiveMinimum, ...)."""
    return {"type": "number", "default": default, "description": doc, **bounds}


def integer(default: int, doc: str, **bounds: int) -> ParamSchema:
    return {"type": "integer", "default": default, "description": doc, **bounds}


def point(default: list[float], doc: str) -> ParamSchema:
    return {"type": "array", "items": {"type": "number"}, "minItems": len(default),
            "maxItems": len(default), "default": default, "description": doc}


def points(default: list[list[float]], doc: str) -> ParamSchema:
    """A list of 2-D points; how many is the template's constraint to check (its error says what
    is valid, where a schema's says only "too short")."""
    return {"type": "array", "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
            "default": default, "description": doc + " as a list of [x, y]"}


def rectangle(default: list[float], doc: str) -> ParamSchema:
    return {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4,
            "default": default, "description": doc + " as [xmin, xmax, ymin, ymax]"}


def disk(default: dict[str, Any], doc: str) -> ParamSchema:
    return {"type": "object", "additionalProperties": False, "required": ["center", "radius"],
            "properties": {"center": {"type": "array", "items": {"type": "number"},
                                      "minItems": 2, "maxItems": 2},
                           "radius": {"type": "number", "exclusiveMinimum": 0}},
            "default": default, "description": doc + " as {center: [x, y], radius: r}"}


def disks(default: list[dict[str, Any]], doc: str, min_items: int = 1) -> ParamSchema:
    item = disk(default[0], doc)
    item.pop("default")
    item.pop("description")
    return {"type": "array", "items": item, "minItems": min_items, "maxItems": 12,
            "default": default, "description": doc + " as a list of {center: [x, y], radius: r}"}


# --------------------------------------------------------------------------- templates
@dataclass(frozen=True)
class DomainTemplate:
    name: str
    dim: int
    #: parameter name -> JSON Schema (with ``default`` and ``description``), in display order
    params: Mapping[str, ParamSchema]
    #: exact geometry from complete parameters
    geometry: Callable[[dict[str, Any]], Geometry]
    #: one sentence for prompts, from complete parameters
    describe: Callable[[dict[str, Any]], str]
    #: cross-parameter validity; each problem's pointer names the parameter (e.g. "/radius")
    constraints: Callable[[dict[str, Any]], list[Problem]] = lambda p: []
    #: optional wording per boundary tag (else derived from the geometry)
    tag_wording: Callable[[dict[str, Any]], dict[str, str]] | None = None
    #: cell shapes this template can be meshed with, first is the default
    cells: tuple[str, ...] = ("simplex", "quad")
    #: whether a structured (transfinite) mesh is possible
    structured: bool = False
    summary: str = ""

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": False, "properties": dict(self.params)}

    def defaults(self) -> dict[str, Any]:
        return {k: copy.deepcopy(v["default"]) for k, v in self.params.items()}

    def check(self, params: Any, *, schema: bool = True) -> list[Problem]:
        """Problems with ``params`` (pointers relative to the params object).  ``schema=False``
        skips the JSON-Schema check of types and ranges, for parameters that passed it when
        their case was validated (a calibration solve reading casekit's own case_spec: importing
        jsonschema would cost every sandboxed run); the constraints and the geometry are checked
        either way."""
        if not isinstance(params, dict):
            return [Problem("domain parameters must be a mapping", check="domain")]
        if schema:
            import jsonschema

            from casekit.schema import _problems  # one error formatter for every schema

            validator = jsonschema.Draft202012Validator(self.schema())
            problems = [
                Problem(p.message, p.pointer, valid=p.valid, check="domain")
                for err in sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
                for p in _problems(err)
            ]
            if problems:
                return problems
        full = {**self.defaults(), **params}
        try:
            problems = self.constraints(full)
        except (ValueError, ArithmeticError) as exc:  # a constraint that cannot even be evaluated
            return [Problem(f"parameters are inconsistent: {exc}", check="domain")]
        if not problems:
            try:
                self.geometry(full)
            except ValueError as exc:
                problems = [Problem(f"parameters do not give a valid shape: {exc}", check="domain")]
        return [Problem(p.message, p.pointer, valid=p.valid, check="domain") for p in problems]


DOMAINS: Registry[DomainTemplate] = Registry("domain template", plugins="casekit.domains.templates")


def register(template: DomainTemplate) -> DomainTemplate:
    return DOMAINS.register(template.name, template)


def problem(param: str, message: str, valid: str | None = None) -> Problem:
    """A constraint violation naming its parameter (``holes/1`` for an item of a list)."""
    return Problem(message, pointer_join(*param.split("/")), valid=valid, check="domain")


# --------------------------------------------------------------------------- resolved domains
@dataclass(frozen=True)
class Domain:
    """A template with complete, valid parameters and its exact geometry."""

    template: DomainTemplate
    params: dict[str, Any]
    geometry: Geometry = field(repr=False)

    @property
    def name(self) -> str:
        return self.template.name

    @property
    def dim(self) -> int:
        return self.template.dim

    def tags(self) -> list[str]:
        return self.geometry.tags()

    def bbox(self) -> tuple[float, ...]:
        return self.geometry.bbox()

    def inside(self, points: Any, tol: float | None = None) -> Any:
        return self.geometry.inside(points, tol)

    def describe(self) -> str:
        return self.template.describe(self.params)

    def tag_wording(self) -> dict[str, str]:
        wording = self.template.tag_wording(self.params) if self.template.tag_wording else {}
        return {t: wording.get(t) or _describe_tag(self.geometry, t) for t in self.tags()}

    def spec(self) -> dict[str, Any]:
        """The ``case_spec.domain`` block the agent sees."""
        return {
            "type": self.name,
            "dim": self.dim,
            "bounds": [clean(v) for v in self.bbox()],
            "geometry_params": copy.deepcopy(self.params),
            "boundary_tags": self.tag_wording(),
        }


def resolve(name: str, params: Mapping[str, Any] | None = None, *, case_id: str | None = None,
            pointer: str = "/domain", validated: bool = False) -> Domain:
    """The domain ``name`` with ``params`` (missing ones take their defaults).

    Raises a :class:`CasekitError` naming the first bad parameter and what would be valid.
    ``validated=True`` is for parameters of a validated case (solvers reading a case_spec that
    casekit built): their schema is not checked again (see :meth:`DomainTemplate.check`).
    """
    try:
        template = DOMAINS.get(name)
    except CasekitError as exc:
        raise CasekitError(exc.message, pointer + "/template", case_id, valid=exc.valid) from None
    given = dict(params or {})
    problems = template.check(given, schema=not validated)
    if problems:
        first = problems[0]
        raise CasekitError(
            first.message, pointer + "/params" + first.pointer, case_id, valid=first.valid,
            problems=[p.located(case_id=case_id, prefix=pointer + "/params") for p in problems],
        )
    full = {k: given.get(k, v) for k, v in template.defaults().items()}
    return Domain(template, full, template.geometry(full))


def _describe_tag(geometry: Geometry, tag: str) -> str:
    if isinstance(geometry, Box):
        return "the face " + geometry.carriers(tag)[0].describe()
    pieces = geometry.tag_pieces(tag)
    if len(pieces) > 4:
        return f"{len(pieces)} boundary pieces ({', '.join(sorted({p.segment.kind for p in pieces}))})"
    return "; ".join(p.segment.describe() for p in pieces)
