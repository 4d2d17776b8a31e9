"""Validation against the JSON Schemas in ``schemas/`` (the single source of truth).

Every schema error becomes a :class:`~casekit.errors.Problem` with a JSON pointer to the
offending field and, where the schema says it, what would be valid.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError
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
        return _alternatives(error)
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
    message = error.message
    if error.validator == "enum":
        choices = [str(v) for v in error.validator_value]
        valid = ", ".join(choices)
        message = f"{_short(error.instance)} is not a valid choice" + _did_you_mean(error.instance, choices)
    elif error.validator == "const":
        valid = json.dumps(error.validator_value)
    elif error.validator == "type":
        message = f"must be {_type_text(error.validator_value)}, not {_kind(error.instance)}"
    elif error.validator == "pattern":
        valid = error.schema.get("description") or f"text matching {error.validator_value}"
    elif error.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bounds = {k: error.schema[k] for k in ("minimum", "maximum", "exclusiveMinimum",
                                              "exclusiveMaximum") if k in error.schema}
        valid = _describe_bounds(bounds)
    elif error.validator in ("minItems", "maxItems") and isinstance(error.instance, list):
        message = f"{_list_text(error.schema)} is expected, this one has {len(error.instance)}"
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return [Problem(f"missing required field {missing!r}", pointer_join(*path, missing),
                        check="schema")]
    if error.validator in ("oneOf", "not") and error.schema.get("oneOf") and \
            all("required" in alt for alt in error.schema["oneOf"]):
        choices = [" + ".join(alt["required"]) for alt in error.schema["oneOf"]]
        message = "exactly one of these must be given: " + ", ".join(choices)
    return [Problem(message, pointer_join(*path), valid=valid, check="schema")]


def _alternatives(error: ValidationError) -> list[Problem]:
    """A value that matches none of a oneOf/anyOf's alternatives.  When one alternative has the
    value's shape and only something inside it is wrong (a mapping whose ``kind`` is misspelt),
    that is reported, at its field; otherwise the value is named with every alternative as what
    is valid (a boundary kind, "a number or an expression string, or a list of 2 to 3 components")."""
    depth = len(error.absolute_path)
    by_alt: dict[int, list[ValidationError]] = {}
    for e in error.context or ():
        by_alt.setdefault(int(e.relative_schema_path[0]), []).append(e)
    inside = [errs for errs in by_alt.values() if all(len(e.absolute_path) > depth for e in errs)]
    if len(inside) == 1:
        return [p for e in inside[0] for p in _problems(e)]
    alternatives = error.schema.get(error.validator, [])
    choices = [c for alt in alternatives for c in _describe(alt, depth=1)]
    # the alternative the value has the type of, and what it lacks there (a list that is too short)
    fitting = [errs for errs in by_alt.values()
               if not any(len(e.absolute_path) == depth and (e.validator in ("type", "enum", "const") or (
                   e.validator in ("oneOf", "anyOf") and e.context)) for e in errs)]
    why = ""
    if len(fitting) == 1 and len(by_alt) > 1:
        why = ": " + "; ".join(p.message for e in fitting[0] for p in _problems(e))
    names = [v for alt in alternatives for v in _enum(alt)]
    message = f"{_short(error.instance)} is not valid here{why}" + _did_you_mean(error.instance, names)
    return [Problem(message, pointer_join(*error.absolute_path), valid=_or(choices), check="schema")]


def _deref(s: Any) -> Any:
    """A subschema with its ``$ref`` followed (refs of casekit's own schemas only)."""
    while isinstance(s, dict) and isinstance(s.get("$ref"), str):
        file, _, pointer = s["$ref"].partition("#")
        by_name = _registry()[1]
        roots = [by_name[file.removesuffix(".schema.json")]] if file else \
            [by_name["defs"], *(v for k, v in sorted(by_name.items()) if k != "defs")]
        for root in roots:
            target: Any = root
            for part in filter(None, pointer.split("/")):
                target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
            if target is not None:
                s = {**target, **{k: v for k, v in s.items() if k != "$ref"}}
                break
        else:
            return {}
    return s


def _describe(s: Any, depth: int = 0) -> list[str]:
    """What a subschema accepts, as short phrases (one per alternative); below the top
    (``depth`` > 0) a described choice between alternatives is its description."""
    s = _deref(s)
    if not isinstance(s, dict):
        return []
    if "enum" in s:
        return [str(v) for v in s["enum"]]
    if "const" in s:
        return [json.dumps(s["const"])]
    if depth and s.get("description") and ("oneOf" in s or "anyOf" in s):
        return [str(s["description"])]
    if "oneOf" in s or "anyOf" in s:
        return [c for alt in s.get("oneOf") or s.get("anyOf") or [] for c in _describe(alt, depth + 1)]
    kind = s.get("type")
    if kind == "array":
        return [_list_text(s)]
    if kind == "object":
        tag = _deref((s.get("properties") or {}).get("kind", {}))
        if isinstance(tag, dict) and "enum" in tag:
            return ["a mapping with kind " + _or([str(v) for v in tag["enum"]])]
        required = s.get("required") or []
        return ["a mapping" + (f" with {', '.join(required)}" if required else "")]
    if kind is not None:
        return [_type_text(kind)]
    return [str(s["description"])] if s.get("description") else []


def _enum(s: Any) -> list[str]:
    s = _deref(s)
    return [str(v) for v in s.get("enum", [])] if isinstance(s, dict) else []


def _list_text(s: dict[str, Any]) -> str:
    lo, hi = s.get("minItems"), s.get("maxItems")
    count = f"{lo} to {hi}" if lo is not None and hi is not None else f"at least {lo}" if lo is not None else \
        f"at most {hi}" if hi is not None else "any number of"
    return f"a list of {count} components"


_TYPES = {"number": "a number", "integer": "an integer", "string": "a string", "boolean": "true or false",
          "object": "a mapping", "array": "a list", "null": "null"}


def _type_text(kind: Any) -> str:
    kinds = kind if isinstance(kind, list) else [kind]
    return _or([_TYPES.get(str(k), str(k)) for k in kinds])


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    kinds = {int: "a number", float: "a number", str: "a string", list: "a list", dict: "a mapping"}
    return next((f"{_short(value)} ({k})" for t, k in kinds.items() if isinstance(value, t)), _short(value))


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _or(choices: list[str]) -> str:
    return choices[0] if len(choices) == 1 else ", ".join(choices[:-1]) + ", or " + choices[-1] if choices else ""


def _did_you_mean(value: Any, names: list[str]) -> str:
    if not isinstance(value, str) or not names:
        return ""
    import difflib

    close = difflib.get_close_matches(value.lower(), names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close and close[0] != value else ""


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
