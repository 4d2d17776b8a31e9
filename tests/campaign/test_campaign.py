"""A private campaign end to end, as the README writes it: a coarse release of three cases, a
campaign of four drawn in its distribution, the baselines and a memorising submission evaluated on
both, and the report -- which flags the memoriser and finds the calibration solver's rates alike.
No written file holds the secret, a key derived from it or a draw's seed."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit import yamlio
from casekit.cli import app
from tests.campaign.memoriser import write_memoriser
from tests.core.test_readme import _words, campaign_block
from tests.helpers import build_source

pytestmark = [pytest.mark.dolfinx, pytest.mark.slow]
runner = CliRunner()

#: the coarse release: two Poisson cases on the unit square (one stratum) and a heat case on an annulus
CASES = (("poisson", "unit_square", {"bc": "dirichlet"}, 3), ("poisson", "unit_square", {"bc": "dirichlet"}, 5),
         ("heat", "annulus", {"horizon": "long"}, 4))
#: the README's campaign of 30, at the size of a test (Fisher's exact p of 3/3 against 0/4 is 1/35)
N = 4


def _cli(*args: str) -> str:
    result = runner.invoke(app, list(args), terminal_width=200)
    assert result.exit_code == 0, f"casekit {' '.join(args)}\n{result.output[-3000:]}"
    return result.output


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch directory holding cases/ and the release releases/my-bench/1.0.0 made of them."""
    import os

    root = tmp_path_factory.mktemp("campaign")
    for family, domain, levels, seed in CASES:
        src = build_source(family, domain, levels, seed)
        src["eval_grid"] = {"nx": 25, "ny": 25}
        src["calibration"] = {**src["calibration"], "cells_across": 20}
        src["evaluation"]["timeout_sec"] = 90.0  # the agents' contract; a loaded machine must not time out
        path = root / "cases" / family / f"{src['id']}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yamlio.dumps(src))
    here = os.getcwd()
    os.chdir(root)
    try:
        _cli("build", "cases", "--track", "dolfinx", "--repeats", "1")
        _cli("package", "build", "--out", "dist", "--name", "my-bench")
        _cli("release", "dist", "--version", "1.0.0")
    finally:
        os.chdir(here)
    return root


def test_the_readme_campaign_flags_a_memoriser_and_keeps_its_secret(root: Path, monkeypatch: pytest.MonkeyPatch
                                                                     ) -> None:
    monkeypatch.chdir(root)
    home = root / "home"
    home.mkdir()
    subs = {"~/": f"{home}/", "--n 30": f"--n {N}",
            # one timed run per attempt (a coarse test), and the memorising attack beside the baselines
            "--out eval/release": "--out eval/release --repeats 1 --submissions subs/release/memoriser",
            "--out eval/campaign": "--out eval/campaign --repeats 1 --submissions subs/campaign/memoriser"}
    outputs = []
    for line in campaign_block():
        words = _words(line, subs, {})
        if words[0] == "head":  # the secret, made as the README makes it
            subprocess.run(line.replace("~/", f"{home}/"), shell=True, check=True, executable="/bin/bash")
            continue
        if words[:2] == ["casekit", "evaluate"]:
            _memoriser(root, home)
        if words[:3] == ["casekit", "campaign", "report"]:
            words = [*words, "--json"]
        outputs.append(_cli(*words[1:]))
    report = json.loads(outputs[-1])
    by = {s["system"]: s for s in report["systems"]}
    memo, cal = by["memoriser"]["overall"], by["calibration"]["overall"]
    assert (memo["release"]["k"], memo["release"]["n"]) == (3, 3)
    assert (memo["campaign"]["k"], memo["campaign"]["n"]) == (0, N)
    assert by["memoriser"]["possibly_contaminated"] and memo["test"]["p_greater"] < 0.05
    # difficulty parity: the calibration solver passes alike, within each other's intervals
    assert not by["calibration"]["possibly_contaminated"] and by["calibration"]["parity"] is True
    lo_r, hi_r = cal["release"]["ci95"]
    lo_c, hi_c = cal["campaign"]["ci95"]
    assert lo_r <= cal["campaign"]["rate"] <= hi_r and lo_c <= cal["release"]["rate"] <= hi_c
    assert by["zero"]["parity"] is True and not by["zero"]["possibly_contaminated"]
    assert {d["family"] for d in report["distributions"]} <= {"poisson", "heat"}
    # the HTML page of the same report
    _cli("campaign", "report", "--release", "releases/my-bench/1.0.0", "--campaign", f"{home}/campaigns/c1",
         "eval/release", "eval/campaign", "--html", "campaign.html")
    assert "POSSIBLY CONTAMINATED" in (root / "campaign.html").read_text()
    _keeps_its_secret(root, home, outputs)


def _memoriser(root: Path, home: Path) -> None:
    """The memorising attack, for every case of both sets, written once."""
    if (root / "subs" / "release" / "memoriser").is_dir():
        return
    release = root / "releases" / "my-bench" / "1.0.0"
    for side, cases in (("release", release), ("campaign", home / "campaigns" / "c1" / "dataset")):
        ids = [json.loads(line)["id"] for line in (cases / "cases.jsonl").read_text().splitlines()]
        write_memoriser(release, root / "subs" / side / "memoriser", ids)


def _keeps_its_secret(root: Path, home: Path, outputs: list[str]) -> None:
    """Neither the secret, nor a key derived from it, nor a seed is in any file written or in the output;
    the card says the dataset is private and what it follows first."""
    from casekit.authoring.sibling import sibling_seed
    from casekit.campaign.secret import read_keys

    secret_file = home / "campaign.secret"
    secret = secret_file.read_bytes().strip()
    keys = read_keys(secret_file)
    campaign = json.loads((home / "campaigns" / "c1" / "campaign.json").read_text())
    seeds = [sibling_seed(f"{c['anchor']}/{c['draw']}", c["recipe"], keys.draws) for c in campaign["cases"]]
    needles = [secret, base64.b64decode(secret)[:16]]
    for key in (keys.draws, keys.ids, keys.order):
        needles += [key, key.hex().encode(), base64.b64encode(key)]
    for seed in seeds:
        needles += [str(seed).encode(), f"{seed:x}".encode()]
    files = [p for p in root.rglob("*") if p.is_file() and p != secret_file]
    assert len(files) > 50
    for p in files:
        data = p.read_bytes()
        for needle in needles:
            assert needle not in data, f"{p} holds a secret"
    for text in outputs:
        for needle in needles:
            assert needle.decode("latin-1") not in text
    card = (home / "campaigns" / "c1" / "dataset" / "README.md").read_text()
    head = card.split("## Dataset Details", 1)[0]
    assert "## A private campaign" in head and "do not publish" in head and "my-bench 1.0.0" in head
    assert len(campaign["cases"]) == N and campaign["private"] is True
