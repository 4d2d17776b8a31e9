"""The README's commands work as written.

Every command of the tour table and of the shell blocks is an instruction to the reader: each runs
here -- in a scratch directory, on coarse cases, offline, in the order a reader runs them, with
its placeholders filled in (:data:`TOUR`; the quick authoring commands in
:func:`test_a_quick_readme_command_runs`) -- or :data:`NOT_IN_CI` says why it cannot run in CI,
and :func:`test_every_instruction_runs_or_says_why_not` keeps the lists and the README in step.
Every other ``casekit`` command the README mentions in its prose names a real subcommand with real
options.  No step is timed: a loaded machine makes them slower, never wrong.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit import yamlio
from casekit.cli import app
from tests.helpers import build_source

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
runner = CliRunner()

#: tour commands that need nothing built and finish in seconds: run them
RUNNABLE = ("family list", "family show", "domain list", "domain show", "sample", "new")


def _commands() -> list[str]:
    text = README.read_text()
    found = re.findall(r"`(casekit [^`]+)`", text)  # inline, as in the tour's table
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):  # and the shell blocks
        found += [line.strip() for line in block.replace("\\\n", " ").splitlines()]
    out = []
    for cmd in found:
        for alt in cmd.split(" / "):  # "casekit a / casekit b" in one cell
            alt = re.sub(r"\s+#.*$", "", alt.strip())
            if not alt.startswith("casekit "):
                continue
            first, _, rest = alt[len("casekit "):].partition(" ")
            out += [f"casekit {name} {rest}".strip() for name in first.split("/")]  # "new/sample --salt-file"
    return sorted(set(out))


def _instructions() -> list[str]:
    """The commands of the tour table (its first column) and the lines of the shell blocks, each
    on one line with its comment left out."""
    text = README.read_text()
    tour = text.split("## A short tour", 1)[1].split("\n\n", 2)[1]
    found = [c for line in tour.splitlines() if line.startswith("| `")
             for c in re.findall(r"`([^`]+)`", line.split(" | ")[0])]
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if line:
                found.append(line)
    return [" ".join(c.split()) for c in found]


def campaign_block() -> list[str]:
    """The instructions of the README's private-campaign block, in order, as :func:`_instructions` reads them."""
    text = README.read_text().split("### Private campaigns", 1)[1]
    block = re.findall(r"```sh\n(.*?)```", text, re.S)[0]
    lines = [re.sub(r"(^|\s)#.*$", "", line).strip() for line in block.replace("\\\n", " ").splitlines()]
    return [" ".join(line.split()) for line in lines if line]


CAMPAIGN_LINES = campaign_block()


def _without_options(cmd: str) -> str:
    """``cmd`` without its optional parts (``[...]``, nested ones too)."""
    while re.search(r"\[[^\[\]]*\]", cmd):
        cmd = re.sub(r"\s*\[[^\[\]]*\]", "", cmd)
    return cmd


def _argv(cmd: str) -> list[str]:
    """The command's words without the optional parts in [brackets] and with placeholders kept."""
    return shlex.split(_without_options(cmd))[1:]


def _subcommand(argv: list[str]) -> list[str]:
    words = []
    for w in argv:
        if w.startswith("-") or w.isupper() or "/" in w or "." in w:
            break
        words.append(w)
        if runner.invoke(app, [*words, "--help"]).exit_code != 0:
            return words[:-1]
    return words


@pytest.mark.parametrize("cmd", _commands())
def test_a_readme_command_names_real_options(cmd: str) -> None:
    argv = _argv(cmd)
    sub = _subcommand(argv)
    assert sub, f"{cmd}: no such subcommand"
    help_text = runner.invoke(app, [*sub, "--help"], terminal_width=400).output
    options = re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", cmd)
    for opt in options:
        assert opt in help_text, f"{cmd}: {' '.join(sub)} has no option {opt}"


def _runnable(cmd: str) -> bool:
    """A whole quick command (not a fragment such as ``casekit new --salt-file`` in prose)."""
    return any(" ".join(_argv(cmd)).startswith(r) for r in RUNNABLE) and not re.search(r"--[a-z-]+$", cmd)


@pytest.mark.parametrize("cmd", [c for c in _commands() if _runnable(c)])
def test_a_quick_readme_command_runs(cmd: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("a.png", str(tmp_path / "a.png")) for a in _argv(cmd)]
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, f"{cmd}\n{result.output}"


# --- the tour: every instruction that can run in CI, in a reader's order --------------------------


def _coarse(root: Path, family: str, domain: str, levels: dict[str, str], seed: int) -> Path:
    """A coarse case source under ``root/cases`` (the shared test build's parameters: it builds)."""
    src = build_source(family, domain, levels, seed)
    src["eval_grid"] = {"nx": 25, "ny": 25}
    src["calibration"] = {**src["calibration"], "cells_across": 20}
    # the case timeout is the agents' contract: a loaded machine must not turn a run into F-Exec
    src["evaluation"]["timeout_sec"] = 90.0
    path = root / "cases" / family / f"{src['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yamlio.dumps(src))
    return path


def _first_case(root: Path, ctx: dict[str, str]) -> None:
    path = _coarse(root, "poisson", "unit_square", {"bc": "dirichlet"}, 3)
    ctx.update(case=str(path.relative_to(root)),
               anchor=str(REPO / "datasets" / "pdeagent-bench-repaired" / "input" / "pdeagent-bench-v2.jsonl"))


def _public_id(root: Path, ctx: dict[str, str]) -> None:
    """The id agents see of the first case, as its build gave it."""
    [record] = [json.loads(line) for line in (root / "build" / "dolfinx" / "records.jsonl").read_text().splitlines()]
    ctx["public_id"] = record["public_id"]


def _new_case(root: Path, ctx: dict[str, str]) -> None:
    ctx["new_case"] = str(_coarse(root, "heat", "annulus", {"horizon": "long"}, 4).relative_to(root))


def _two_systems(root: Path, ctx: dict[str, str]) -> None:
    """Two systems' submissions: agent_a fails accuracy (the zero field), agent_b passes."""
    shutil.copytree(root / "subs" / "zero", root / "agent_a")
    shutil.copytree(root / "subs" / "calibration", root / "agent_b")


@dataclass(frozen=True)
class Step:
    """One command, as the README writes it in each of ``texts`` (the same command where it is
    written twice); ``subs`` fills its placeholders (values formatted with what the steps so far
    made: ``{case}``, ``{public_id}``, ...); ``setup`` prepares what the reader would have;
    ``exit_code`` is the status the command documents for the state it finds."""

    texts: tuple[str, ...]
    subs: dict[str, str] = field(default_factory=dict)
    setup: Callable[[Path, dict[str, str]], None] | None = None
    exit_code: int = 0


#: the placeholders of the dataset-area commands: the sources (the heat case: one shard) and a scratch area
AREA = {"SOURCES": "cases/heat", "datasets/NAME/build": "datasets/scratch/build", "DIR": "materialised"}

TOUR = (
    Step(("casekit show CASE",), {"CASE": "{case}"}, _first_case),
    Step(("casekit validate PATH... [--jobs 2] [--span]",), {"PATH...": "cases"}),
    Step(("casekit prompt CASE --library dealii [--tier feedback --verdict V [--system S]]",), {"CASE": "{case}"}),
    Step(("casekit env check",)),
    Step(("casekit build cases --track dolfinx [--jobs 2] [--executor dask]", "casekit build cases --track dolfinx")),
    Step(("casekit baselines --cases build --out subs [--set authored] [--kind K]",)),
    Step(("casekit evaluate --cases build --submissions subs/calibration --out eval [--only CASE]",)),
    Step(("casekit evaluate --cases build --track dolfinx --submissions agent_a/ --submissions agent_b/ --out eval/",),
         setup=_two_systems),
    Step(("casekit report eval/",)),
    Step(("casekit prompt CASE_ID --cases build --tier feedback --verdict eval/verdicts.jsonl --system agent_a",),
         {"CASE_ID": "{public_id}"}, _public_id),
    Step(("inspect eval casekit/benchmark -T cases=build --model mockllm/model",)),
    # no API key in CI: the section's run with Inspect's mock model, whose answers hold no code
    Step(("inspect eval casekit/benchmark -T cases=build -T track=dolfinx -T attempts=3 -T out=eval/model_x "
          "--model openai/gpt-4o",), {"openai/gpt-4o": "mockllm/model"}),
    Step(("casekit report eval/model_x",)),
    Step(("casekit report eval_a eval_b [--html out]",), {"eval_a": "eval", "eval_b": "eval/model_x"}),
    Step(("casekit report eval_a --html report.html",), {"eval_a": "eval"}),
    Step(("casekit package build --out dist [--subset authored=DIR]",)),
    Step(("casekit verify dist",)),
    Step(("casekit package build --out dist --name my-bench",)),
    Step(("casekit release dist --version 1.0.0",)),
    Step(("casekit evaluate --release releases/my-bench/1.0.0 --track dolfinx --submissions agent_a/ --out eval/",)),
    Step(("casekit build cases/stokes/new_case.yaml",), {"cases/stokes/new_case.yaml": "{new_case}"}, _new_case),
    Step(("casekit build cases --prune",)),
    Step(("casekit package build --out dist --name my-bench",)),
    Step(("casekit release dist --previous releases/my-bench/1.0.0 --dry-run",)),
    Step(("casekit release dist --previous releases/my-bench/1.0.0", "casekit release dist --previous releases/NAME/V"),
         {"releases/NAME/V": "releases/my-bench/1.0.0"}),
    Step(("casekit verify releases/my-bench/1.1.0",)),
    Step(("casekit reproduce RELEASE --sources cases [--sample stratified]",), {"RELEASE": "releases/my-bench/1.1.0"}),
    Step(("casekit import pdeagent-bench FILE --out DIR [--repair]",), {"FILE": "{anchor}", "DIR": "imported"}),
    # its status is 1 while the primary track has cases to build (here: the shard)
    Step(("casekit dataset status SOURCES --area datasets/NAME/build",), AREA, exit_code=1),
    Step(("casekit dataset build SOURCES --area datasets/NAME/build --shard heat",), AREA),
    Step(("casekit dataset numbers --area datasets/NAME/build [--json]",), AREA),
    Step(("casekit dataset materialise SOURCES --area datasets/NAME/build --out DIR",), AREA),
)

#: the README's private-campaign block: run by tests/campaign/test_campaign.py, as written, on a coarse
#: release and a campaign of a few cases (its own test: a campaign draws, validates and builds, minutes)
CAMPAIGN_BLOCK = "tests/campaign/test_campaign.py runs the private-campaign block as written on coarse cases"

#: instructions that cannot run in CI, and why
NOT_IN_CI = {
    "bin/setup && .venv/bin/casekit demo": "bin/setup is bin/test's first step; casekit demo is the pipeline of "
                                           "the tour on a larger sample (minutes): the tour runs it on coarse cases",
    "bin/test": "the test suite itself",
    "casekit env install dealii": "installs a track's environment from the network (deal.II from Debian's packages); "
                                  "CI installs the missing ones with .ci/install-track-envs",
    "nox -s dataset": "builds or lists the committed dataset's shards (hours of builds on a fresh machine); the "
                      "dataset commands run on a scratch area in the tour",
    "nox -s dataset -- --shard heat --tracks dolfinx": "builds a shard of the committed dataset (up to an hour)",
    "nox -s dataset -- --shard authored.heat": "builds a shard of the committed authored sample",
    "git add datasets/pdeagent-bench-repaired/build/dolfinx/heat && git commit": "commits to the repository",
    "git add datasets/pdeagent-bench-repaired/build-authored/dolfinx/heat && git commit": "commits to the repository",
    "casekit dataset status cases --exclude cases/pdeagent-bench --area "
    "datasets/pdeagent-bench-repaired/build-authored":
        "derives every authored source of the repository (minutes on a fresh machine); the same command runs on "
        "a scratch area in the tour",
    **{line: CAMPAIGN_BLOCK for line in CAMPAIGN_LINES},
}


def test_every_instruction_runs_or_says_why_not() -> None:
    instructions = set(_instructions())
    run = {t for step in TOUR for t in step.texts} | {c for c in instructions if _runnable(c)}
    assert not instructions - run - set(NOT_IN_CI), "README instructions neither run nor listed in NOT_IN_CI"
    assert not (run | set(NOT_IN_CI)) - instructions - {c for c in _commands() if _runnable(c)}, \
        "commands listed here that the README no longer gives"
    assert not run & set(NOT_IN_CI)


def _words(text: str, subs: dict[str, str], ctx: dict[str, str]) -> list[str]:
    for key in sorted(subs, key=len, reverse=True):
        text = text.replace(key, subs[key].format(**ctx))
    return shlex.split(_without_options(text))


def _offline() -> dict[str, str]:
    """The environment of a run without a network: every HTTP request goes to a closed port (so a
    download, such as tiktoken's table, fails at once), and no tiktoken table is cached."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy",)}
    closed = "http://127.0.0.1:9"
    return {**env, "HTTP_PROXY": closed, "HTTPS_PROXY": closed, "http_proxy": closed, "https_proxy": closed,
            "INSPECT_DISPLAY": "plain"}


def _inspect(words: list[str], root: Path) -> str:
    """An Inspect command, offline; ``inspect eval`` exits 0 whatever became of the task, so the
    run is checked in its log too."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    before = {log.name for log in list_eval_logs(str(root / "logs"))} if (root / "logs").is_dir() else set()
    env = {**_offline(), "TIKTOKEN_CACHE_DIR": str(root / "no-tiktoken-cache")}
    exe = Path(sys.executable).with_name("inspect")
    proc = subprocess.run([str(exe), *words[1:]], cwd=root, env=env, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    logs = [read_eval_log(log, header_only=True) for log in list_eval_logs(str(root / "logs"))
            if log.name not in before]
    assert len(logs) == 1 and logs[0].status == "success", (logs and logs[0].error, output[-3000:])
    return output


@pytest.mark.dolfinx
def test_the_tour_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tour's commands, the evaluation, Inspect and release blocks and the dataset-area
    commands, one after the other on two coarse cases, each as the README writes it."""
    pytest.importorskip("inspect_ai")
    monkeypatch.chdir(tmp_path)
    ctx: dict[str, str] = {}
    for step in TOUR:
        if step.setup:
            step.setup(tmp_path, ctx)
        argvs = {tuple(_words(t, step.subs, ctx)) for t in step.texts}
        assert len(argvs) == 1, f"{step.texts} are not one command"
        [words] = [list(a) for a in argvs]
        if words[0] == "inspect":
            _inspect(words, tmp_path)
            continue
        result = runner.invoke(app, words[1:], terminal_width=200)
        assert result.exit_code == step.exit_code, f"{step.texts[0]} (as {' '.join(words)})\n{result.output[-3000:]}"
    # what the reader has at the end
    assert (tmp_path / "releases" / "my-bench" / "1.1.0" / "croissant.json").is_file()
    assert (tmp_path / "eval" / "model_x" / "verdicts.jsonl").is_file()
    assert (tmp_path / "materialised").is_dir() and list((tmp_path / "imported").rglob("*.yaml"))


def test_an_inspect_task_that_cannot_start_exits_non_zero(tmp_path: Path) -> None:
    """The README: a task that cannot start stops ``inspect eval`` with a one-line error and status 1."""
    pytest.importorskip("inspect_ai")
    words = _words("inspect eval casekit/benchmark -T cases=build --model mockllm/model", {}, {})
    proc = subprocess.run([str(Path(sys.executable).with_name("inspect")), *words[1:]], cwd=tmp_path, env=_offline(),
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "casekit/benchmark: build holds no built cases" in proc.stdout and "Traceback" not in proc.stdout
