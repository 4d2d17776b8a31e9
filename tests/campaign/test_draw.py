"""Drawing a campaign: proportional allocation over the release's strata, turns of anchors, the
secret's keys and the refusals of ``casekit campaign new`` (no build: these take seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from casekit import yamlio
from casekit.campaign.draw import MAX_ID, Stratum, allocate, case_id, draw_case, turns
from casekit.campaign.new import Options, git_work_tree, new_campaign
from casekit.campaign.secret import derive, read_keys
from casekit.cli import app
from casekit.errors import UsageError

KEYS = derive(b"0123456789abcdef-a-test-secret")
runner = CliRunner()


def _strata(counts: list[int]) -> dict[Stratum, int]:
    return {Stratum("poisson", "elliptic", f"d{i}"): c for i, c in enumerate(counts)}


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=25), st.integers(1, 200))
def test_allocation_is_proportional_and_sums_to_n(counts: list[int], n: int) -> None:
    strata = _strata(counts)
    got = allocate(strata, n, KEYS)
    assert sum(got.values()) == n
    total = sum(counts)
    for s, c in strata.items():
        assert abs(got.get(s, 0) - n * c / total) < 1  # largest remainders: within one of the quota


def test_ties_go_the_way_the_secret_orders_them() -> None:
    strata = _strata([1] * 12)  # 12 equal strata, 3 cases: which three is the secret's choice
    picks = {tuple(sorted(s.domain for s in allocate(strata, 3, derive(bytes([i]) * 16)))) for i in range(8)}
    assert len(picks) > 1
    assert allocate(strata, 3, KEYS) == allocate(strata, 3, KEYS)


def test_turns_take_every_anchor_before_a_second_draw() -> None:
    it = turns(["a", "b", "c"], KEYS)
    first = [next(it) for _ in range(6)]
    assert sorted(a for a, _ in first[:3]) == ["a", "b", "c"] and {k for _, k in first[:3]} == {0}
    assert [a for a, _ in first[3:]] == [a for a, _ in first[:3]] and {k for _, k in first[3:]} == {1}


def test_a_case_id_fits_the_identifier_rule() -> None:
    assert case_id("poisson_x", 3) == "poisson_x_fresh3"
    assert len(case_id("poisson_" + "x" * 200, 12)) == MAX_ID


def test_keys_hide_themselves_and_refuse_a_short_secret(tmp_path: Path) -> None:
    assert "secret" in repr(KEYS) and KEYS.draws.hex() not in repr(KEYS)
    assert len({KEYS.draws, KEYS.ids, KEYS.order}) == 3
    short = tmp_path / "short"
    short.write_text("too short")
    with pytest.raises(UsageError, match="at least 16"):
        read_keys(short)
    with pytest.raises(UsageError, match="not a file"):
        read_keys(tmp_path / "missing")


def test_a_draw_is_the_anchors_problem_with_a_solution_only_the_secret_redoes() -> None:
    from tests.helpers import build_source

    anchor = build_source("poisson", "unit_square", {"bc": "dirichlet"}, 3)
    stratum = Stratum("poisson", "elliptic", "unit_square")
    d = draw_case(anchor, anchor["id"], 0, stratum, KEYS, "my-bench 1.0.0")
    assert d.source is not None, d.failures
    src = d.source
    assert src["id"] == f"{anchor['id']}_fresh0" and src["public_id"].startswith("case-")
    assert src["provenance"]["anchor"] == anchor["id"]
    for key in ("family", "domain", "pde", "boundary", "eval_grid", "output", "calibration", "evaluation"):
        assert src[key] == anchor[key], key
    assert src["manufactured_solution"] != anchor["manufactured_solution"]
    # the same secret redraws it; another draws another case; neither the seed nor a key is in the source
    again = draw_case(anchor, anchor["id"], 0, stratum, KEYS, "my-bench 1.0.0")
    assert again.source == src
    other = draw_case(anchor, anchor["id"], 0, stratum, derive(b"another secret of 16+ bytes"), "my-bench 1.0.0")
    assert other.source is not None and other.source["manufactured_solution"] != src["manufactured_solution"]
    assert other.source["public_id"] != src["public_id"]
    from casekit.authoring.sibling import sibling_seed

    text = yamlio.dumps(src)
    seed = sibling_seed(f"{anchor['id']}/0", d.attempt, KEYS.draws)
    assert str(seed) not in text and f"{seed:x}" not in text and KEYS.draws.hex() not in text


def test_new_refuses_a_git_work_tree_and_a_used_directory(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    assert git_work_tree(tmp_path / "repo" / "a" / "b") == tmp_path / "repo"
    assert git_work_tree(tmp_path / "elsewhere") is None  # pytest's temporary directories are in no work tree
    opts = Options(tmp_path / "no-release", [tmp_path], 3, tmp_path / "repo" / "campaign")
    with pytest.raises(UsageError, match="inside the git work tree"):
        new_campaign(opts, KEYS)
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("")
    with pytest.raises(UsageError, match="not empty"):
        new_campaign(Options(tmp_path / "no-release", [tmp_path], 3, used), KEYS)
    # --allow-git passes the work-tree check (and stops at the missing release)
    with pytest.raises(UsageError, match="not a casekit release"):
        new_campaign(Options(tmp_path / "no-release", [tmp_path], 3, tmp_path / "repo" / "campaign",
                             allow_git=True), KEYS)


def test_the_cli_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("x" * 32)
    result = runner.invoke(app, ["campaign", "new", "--like", str(tmp_path / "nothing"), "--n", "3", "--secret-file",
                                 str(secret), "--out", str(tmp_path / "c"), "--track", "dolfinx"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    result = runner.invoke(app, ["campaign", "report", "--release", str(tmp_path), "--campaign", str(tmp_path),
                                 str(tmp_path)])
    assert result.exit_code == 2 and "not a campaign directory" in result.output


def test_strata_drawn_in_worker_processes_are_the_ones_drawn_here() -> None:
    from casekit.campaign.draw import StratumDraw, draw_all
    from tests.helpers import build_source

    a = build_source("poisson", "unit_square", {"bc": "dirichlet"}, 3)
    b = build_source("poisson", "unit_square", {"bc": "dirichlet"}, 5)
    jobs = [StratumDraw(Stratum("poisson", "elliptic", "unit_square"), 1, {a["id"]: a}),
            StratumDraw(Stratum("poisson", "elliptic", "unit_square_b"), 1, {b["id"]: b})]
    here = draw_all(jobs, KEYS, "my-bench 1.0.0", workers=1)
    there = draw_all(jobs, KEYS, "my-bench 1.0.0", workers=2)
    assert {s: [d.source for d in ds] for s, (ds, _) in here.items()} == \
        {s: [d.source for d in ds] for s, (ds, _) in there.items()}
    assert all(n == 1 for _, n in here.values())  # the next turn of each stratum
