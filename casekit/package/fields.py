"""What each column of a packaged dataset means, read from the JSON Schemas (``schemas/``, the
source of truth of every data contract): each property's ``description``.  One place for the
dataset card's field tables and the Croissant record sets' fields; a property without a
description is an error here, so a new column cannot go undocumented.

Two kinds of rows: ``agent`` (the agent views, ``agent_view.schema.json``) and ``cases`` (the
evaluator records, ``case_record.schema.json``); ``case_spec`` (``case_spec.schema.json``) is the
object both carry.  The Croissant ``agent`` record sets add :data:`PROMPT`, the rendered prompt.
"""

from __future__ import annotations

from casekit.errors import CasekitError

#: the schema of each kind of row (and of the case_spec both carry)
SCHEMAS = {"agent": "agent_view", "cases": "case_record", "case_spec": "case_spec"}

#: the prompt beside an agent view (``prompts/<library>/<public id>.md``; not a column of agent.jsonl)
PROMPT = ("The single-tier prompt of the case for the library (prompts/<library>/<public id>.md): the task "
          "as an agent is given it, the case_spec included")


def described(kind: str) -> dict[str, str]:
    """Property -> description of the rows of ``kind`` (``agent``, ``cases`` or ``case_spec``),
    in the schema's order."""
    from casekit.schema import schema

    name = SCHEMAS[kind]
    props = schema(name)["properties"]
    missing = [k for k, v in props.items() if not v.get("description")]
    if missing:
        raise CasekitError(f"schemas/{name}.schema.json: properties without a description: {', '.join(missing)}",
                           valid="a description for every property (the dataset card and Croissant read them)")
    return {k: " ".join(v["description"].split()) for k, v in props.items()}
