"""The wording of every boundary tag comes from the tag's own pieces: its counts and shapes match
the geometry on every template (issue 30: the T-junction's walls were "six straight walls", five
segments in the geometry), and it is what case_specs carry."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit.domains import resolve
from casekit.domains.geometry import Box
from casekit.domains.template import DOMAINS
from casekit.prompts.boundary_words import LISTED, PLAIN, boundary_tags, singular

REPO = Path(__file__).resolve().parents[2]
KINDS = ("straight edges", "circular arcs", "elliptic arcs")
#: how a piece of each kind is described when listed one by one
LISTED_AS = {"straight edges": (r"the segment from",),
             "circular arcs": (r"the arc of the circle", r"(?<!arc of )the circle of"),
             "elliptic arcs": (r"the arc of the ellipse",)}


def _check(domain: Any) -> None:
    words = boundary_tags(domain)
    assert list(words) == domain.tags()
    if isinstance(domain.geometry, Box):
        for tag, text in words.items():
            assert text.startswith("the face ") and "=" in text, (domain.name, tag, text)
        return
    for tag, text in words.items():
        pieces = domain.geometry.tag_pieces(tag)
        kinds = Counter(p.segment.kind for p in pieces)
        stated = Counter({kind: int(n) for n, k in re.findall(r"(\d+) (\w+ \w+)", text)
                          for kind in KINDS if k in (kind, singular(kind))})
        where = f"{domain.name} {domain.params}: {tag!r} is {text!r}"
        if len(pieces) > PLAIN:
            assert stated == kinds, f"{where}; its pieces: {dict(kinds)}"
        else:
            assert not stated, where
        if len(pieces) <= LISTED:  # every piece described, each as its kind
            for kind, n in kinds.items():
                described = sum(len(re.findall(phrase, text)) for phrase in LISTED_AS[kind])
                assert described == n, f"{where}: {described} {kind} described, {n} in the geometry"
            assert len(text.split("; ")) == len(pieces), where


@pytest.mark.parametrize("name", DOMAINS.names())
def test_the_wording_of_every_tag_matches_its_pieces(name: str) -> None:
    _check(resolve(name))


def test_the_t_junction_has_five_walls() -> None:
    assert boundary_tags(resolve("t_junction"))["walls"].startswith("5 straight edges: ")


def _integer_params() -> list[tuple[str, str, int, int]]:
    out = []
    for name in DOMAINS.names():
        for param, schema in DOMAINS.get(name).params.items():
            if schema.get("type") == "integer":
                out.append((name, param, int(schema.get("minimum", 1)), int(schema.get("maximum", 64))))
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_counts_follow_the_parameters(data: st.DataObject) -> None:
    """Templates whose pieces depend on an integer parameter (a star's points, a gear's teeth)."""
    choices = _integer_params()
    if not choices:
        return
    name, param, lo, hi = data.draw(st.sampled_from(choices))
    value = data.draw(st.integers(lo, hi))
    template = DOMAINS.get(name)
    if template.check({param: value}):  # invalid with the other parameters' defaults
        return
    _check(resolve(name, {param: value}))


def test_case_specs_carry_the_wording() -> None:
    from casekit.derive import derive
    from casekit.model.source import CaseSource, load_source_dict

    path = next(p for p in sorted((REPO / "cases").glob("*/*.yaml")) if "t_junction" in p.read_text())
    source = CaseSource.from_dict(load_source_dict(path))
    spec = derive(source).case_spec()
    dom = spec["domain"]
    assert dom["boundary_tags"] == boundary_tags(resolve(dom["type"], dom["geometry_params"]))
    assert "six" not in str(dom["boundary_tags"])
