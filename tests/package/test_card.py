"""The dataset card's generated text (``casekit.package.card``), on small fabricated records (no
FEM): what it says must hold for the records it describes."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
import yaml

from casekit.package.card import _demote, card
from casekit.package.subsets import Packaged, Subset


def _record(cid: str, family: str, runs: int, *, imported: bool, numerical: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"e_base": 1e-4, "t_base": 1.0, "t_base_runs": [1.0 + i / 10 for i in range(runs)],
                            "construction_method": "numerical" if numerical else "manufactured"}
    if imported:
        meta["provenance"] = {"anchor": cid, "status": "kept", "why": ""}
    return {"id": cid, "public_id": f"case-{cid}", "pde_classification": {"equation_family": family},
            "case_spec": {"domain": {"type": "unit_square"}}, "evaluation_metadata": meta,
            "tags": [] if imported else ["domain:unit_square", "bc:dirichlet"], "supported_libraries": ["dolfinx"]}


MAIN = [_record("poisson_a", "poisson", 1, imported=True), _record("heat_b", "heat", 1, imported=True)]
AUTHORED = [_record("poisson_x", "poisson", 1, imported=False)]
OTHERS = [Packaged(Subset("authored", ("dolfinx",)), {"dolfinx": AUTHORED}, 1)]
SIZES = [(Subset("", ("dolfinx",)), {"sampled": 1, "shipped": 1, "bytes": 10, "raw_bytes": 20}),
         (Subset("authored", ("dolfinx",)), {"sampled": 1, "shipped": 0, "bytes": 0, "raw_bytes": 0})]


def _card(records: list[dict[str, Any]] = MAIN, **kw: Any) -> str:
    return card("demo", "1.0.0", records, ["dolfinx"], "cc-by-4.0", {"dolfinx": records}, **kw)


def test_the_front_matter_states_no_split_size_it_does_not_know() -> None:
    front = yaml.safe_load(_card(others=OTHERS).split("---\n")[1])
    splits = [s for info in front["dataset_info"] for s in info["splits"]]
    assert splits and all("num_bytes" not in s for s in splits)
    assert [s["num_examples"] for s in splits] == [2, 2, 1, 1]


def test_the_references_are_counted_set_by_set() -> None:
    text = _card(others=OTHERS, references=SIZES)
    assert "1 of the 2 case(s) of the main set (10 bytes compressed, 20 bytes of arrays); 0 of the 1 case(s) of " \
           "the set `authored`" in text
    assert "the other 2 case(s)" not in text


@pytest.mark.parametrize(("runs", "said"), [((1, 1), "timed\nin one isolated run per case"),
                                           ((3, 3), "timed\nas the median of 3 isolated runs per case"),
                                           ((1, 3), "timed\nas the median of 1 to 3 isolated runs per case")])
def test_the_timing_states_the_runs_the_records_hold(runs: tuple[int, int], said: str) -> None:
    records = [_record("poisson_a", "poisson", runs[0], imported=True), _record("heat_b", "heat", runs[1],
                                                                                  imported=True)]
    text = _card(records)
    assert said in text and "median of repeated isolated runs" not in text


def test_the_configurations_named_are_the_ones_the_dataset_has() -> None:
    text = _card(others=OTHERS)
    configs = [c["config_name"] for c in yaml.safe_load(text.split("---\n")[1])["configs"]]
    structure = text.split("## Dataset Structure", 1)[1].split("```python", 1)[0]
    assert all(f"`{c}`" in structure for c in configs)
    assert "<track>" not in structure and "cases_" not in structure
    two = card("demo", "1.0.0", MAIN, ["dolfinx", "firedrake"], "cc-by-4.0", {"dolfinx": MAIN, "firedrake": MAIN})
    assert "`cases_firedrake` (its firedrake records, `tracks/firedrake.jsonl`)" in two


def test_the_card_says_which_records_carry_tags_and_where_the_cases_come_from() -> None:
    text = _card(others=OTHERS)
    assert "Which records carry `tags` here: none of the 2 of `cases`; all 1 of `authored`." in text
    assert "1 case(s) are design points sampled over each family's axes; 2 adapt a published record" in text


def test_the_headings_nest_under_the_provenance_section() -> None:
    about = "# Source\n\ntext\n\n## Anchor vs release\n\n```sh\n# a comment, not a heading\n```\n\n#### Deep\n"
    assert _demote(about).splitlines() == ["### Source", "", "text", "", "#### Anchor vs release", "", "```sh",
                                           "# a comment, not a heading", "```", "", "##### Deep"]
    assert _demote("## Only\n\n#### Deeper").splitlines() == ["### Only", "", "#### Deeper"]
    text = _card(about="# Source\n\n## Part\n\nx")
    prose = re.sub(r"```.*?```", "", text, flags=re.S)  # the loading snippet's comments are no headings
    levels = [len(line) - len(line.lstrip("#")) for line in prose.splitlines() if line.startswith("#")]
    assert all(b <= a + 1 for a, b in itertools.pairwise(levels))


def test_the_counts_say_which_set_they_count() -> None:
    text = _card(others=OTHERS)
    assert "A benchmark of 2 cases (and 1 more in the set `authored`, its own configurations)" in text
    assert "The main set's cases:\n\n| family | cases |" in text and "e_base of the main set:" in text
    assert "(the set `authored`'s are `authored/agent.jsonl`, `authored/cases.jsonl` and `authored/case_specs/`)" \
        in text
    alone = _card()
    assert "A benchmark of 2 cases in which" in alone and "main set" not in alone.split("## Dataset Structure")[0]
