"""The README's commands work as written: the tour's quick commands run for real (in a scratch
directory), and every other ``casekit`` command names a real subcommand with real options."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit.cli import app

README = Path(__file__).resolve().parents[2] / "README.md"
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


def _argv(cmd: str) -> list[str]:
    """The command's words without the optional parts in [brackets] and with placeholders kept."""
    return shlex.split(re.sub(r"\[[^\]]*\]", "", cmd))[1:]


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
