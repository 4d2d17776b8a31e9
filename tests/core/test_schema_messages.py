"""Schema errors say what would be valid: a value that matches none of a oneOf's alternatives is
named with the alternatives (a boundary kind's names, "a number or an expression string, or a list
of 2 to 3 components"), a misspelt name gets the close one, a wrong type says what it must be --
never jsonschema's "is not valid under any of the given schemas"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from casekit import schema
from casekit.cli import app
from tests.helpers import poisson, write

RAW = ("is not valid under any of the given schemas", "is not of type", "is not one of [")


def _set(src: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    node = src
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return src


PATHS = [("boundary", "bottom"), ("boundary", "top"), ("boundary", "top", "kind"), ("boundary", "top", "alpha"),
         ("pde", "params", "kappa"), ("eval_grid", "nx"), ("output", "field"), ("manufactured_solution", "u"),
         ("domain", "template"), ("tracks",)]
VALUES = st.one_of(st.text(max_size=12), st.lists(st.floats(-5, 5), max_size=4), st.booleans(),
                   st.integers(-3, 3), st.dictionaries(st.sampled_from(["kind", "a", "alpha"]),
                                                       st.sampled_from(["robn", 1, [0.1]]), max_size=2))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(PATHS), VALUES)
def test_every_schema_problem_of_a_mutated_source_says_what_is_valid(path: tuple[str, ...], value: Any) -> None:
    src = _set(poisson(), path, value)
    for p in schema.validate(src, "case_source"):
        assert not any(raw in p.message for raw in RAW), p.render()
        assert p.pointer.startswith("/"), p.render()
        words = ("must", "expected", "missing", "unknown field", "too", "should", "does not match", "non-unique",
                 "non-empty")
        assert p.valid or any(w in p.message for w in words), p.render()


def test_the_reported_sources_name_the_file_the_field_and_the_valid_choices(tmp_path: Path) -> None:
    bottom = poisson(id="p_kind")
    bottom["boundary"]["bottom"] = "diriclet"
    nu = poisson(id="p_list", pde={"params": {"kappa": [0.01]}})
    kind = poisson(id="p_robin")
    kind["boundary"]["top"] = {"kind": "robn", "alpha": 2.0}
    files = [write(tmp_path, s) for s in (bottom, nu, kind)]
    r = CliRunner().invoke(app, ["validate", *map(str, files)])
    assert r.exit_code == 1
    lines = {line.split(":")[1].strip(): line for line in r.stdout.splitlines() if line.startswith(str(tmp_path))}
    assert str(files[0]) in lines["p_kind"] and "/boundary/bottom: 'diriclet'" in lines["p_kind"]
    assert "did you mean 'dirichlet'?" in lines["p_kind"] and "dirichlet, neumann, periodic" in lines["p_kind"]
    assert "robin" in lines["p_kind"]
    assert "/pde/params/kappa: [0.01]" in lines["p_list"] and "a number" in lines["p_list"]
    assert "a list of 2 to 3 components" in lines["p_list"]
    assert "/boundary/top/kind: 'robn'" in lines["p_robin"] and "did you mean 'robin'?" in lines["p_robin"]
    assert not any(raw in r.stdout for raw in RAW)
