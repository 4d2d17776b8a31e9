"""Validation against the JSON Schemas in ``schemas/`` (the single source of truth).

Every schema error becomes a :class:`~casekit.errors.Problem` with a JSON pointer to the
offending field and, where the schema says it, what would be valid.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from casekit.errors import Problem, pointer_join
from casekit.resources import schemas_dir

SCHEMAS = ("case_source", "case_record", "case_spec", "agent_view", "meta", "verdict")


@cache
def _registry() -> tuple[Registry, dict[str, dict]]:
    resources = []
    by_name: dict[str, dict] = {}
    for path in sorted(schemas_dir().glob("*.schema.json")):
        contents = json.loads(path.read_text())
        by_name[path.name.removesuffix(".schema.json")] = contents
        resources.append((contents["$id"], Resource.from_contents(contents)))
    return Registry().with_resources(resources), by_name


def schema(name: str) -> dict:
    return _registry()[1][name]


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    registry, by_name = _registry()
    if name not in by_name:
        raise KeyError(f"no schema named {name!r}; known: {', '.join(sorted(by_name))}")
    cls = jsonschema.validators.validator_for(by_name[name])
    cls.check_schema(by_name[name])
    return cls(by_name[name], registry=registry, format_checker=cls.FORMAT_CHECKER)


def validate(instance: Any, name: str) -> list[Problem]:
    """Problems of ``instance`` against schema ``name``; empty when it conforms."""
    problems: list[Problem] = []
    for error in sorted(_validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path)):
        problems.extend(_problems(error))
    return problems


def _problems(error: ValidationError) -> list[Problem]:
    if error.validator in ("oneOf", "anyOf") and error.context:
        deeper = best_match(error.context)
        # a oneOf between alternatives: report the alternative that got furthest
        if deeper is not None and len(deeper.absolute_path) > len(error.absolute_path):
            return _problems(deeper)
    path = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        if allowed and extra:
            return [
                Problem(f"unknown field {k!r}", pointer_join(*path, k), valid=", ".join(allowed),
                        check="schema")
                for k in extra
            ]
    valid = None
    if error.validator == "enum":
        valid = ", ".join(map(str, error.validator_value))
    elif error.validator == "const":
        valid = json.dumps(error.validator_value)
    elif error.validator == "pattern":
        valid = error.schema.get("description") or f"text matching {error.validator_value}"
    elif error.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bounds = {k: error.schema[k] for k in ("minimum", "maximum", "exclusiveMinimum",
                                              "exclusiveMaximum") if k in error.schema}
        valid = _describe_bounds(bounds)
    message = error.message
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return [Problem(f"missing required field {missing!r}", pointer_join(*path, missing),
                        check="schema")]
    if error.validator in ("oneOf", "not") and error.schema.get("oneOf") and \
            all("required" in alt for alt in error.schema["oneOf"]):
        choices = [" + ".join(alt["required"]) for alt in error.schema["oneOf"]]
        message = "exactly one of these must be given: " + ", ".join(choices)
    return [Problem(message, pointer_join(*path), valid=valid, check="schema")]


def _describe_bounds(bounds: dict[str, float]) -> str:
    parts = []
    if "minimum" in bounds:
        parts.append(f">= {bounds['minimum']}")
    if "exclusiveMinimum" in bounds:
        parts.append(f"> {bounds['exclusiveMinimum']}")
    if "maximum" in bounds:
        parts.append(f"<= {bounds['maximum']}")
    if "exclusiveMaximum" in bounds:
        parts.append(f"< {bounds['exclusiveMaximum']}")
    return "a number " + " and ".join(parts)
