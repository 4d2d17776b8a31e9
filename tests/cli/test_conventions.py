"""What holds for every command, checked by walking the Typer app: every option and argument has
help, flags read as plain flags, every command taking --jobs refuses 0 alike, every listing and
result command takes --json, shell completion is offered."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from casekit.cli import app

runner = CliRunner()


def _commands() -> Iterator[tuple[list[str], Any]]:
    def walk(cmd: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
        if hasattr(cmd, "commands"):  # a group (Typer carries its own click: duck-typed)
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, [*path, name])
        else:
            yield path, cmd

    yield from walk(typer.main.get_command(app), [])


COMMANDS = list(_commands())
#: commands that print no result a script would read: they write files and say where
NO_RESULT = {"demo", "domain gallery", "env install", "track new", "dataset materialise"}


def _ids() -> list[str]:
    return [" ".join(p) for p, _ in COMMANDS]


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=_ids())
def test_every_parameter_has_help(path: list[str], cmd: Any) -> None:
    missing = [p.name for p in cmd.params if not (getattr(p, "help", None) or "").strip()]
    assert not missing, f"casekit {' '.join(path)}: no help for {missing}"
    assert (cmd.help or "").strip(), f"casekit {' '.join(path)} has no description"


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=_ids())
def test_flags_read_as_plain_flags_in_help(path: list[str], cmd: Any) -> None:
    text = runner.invoke(app, [*path, "--help"], terminal_width=200).output
    assert "<bool>" not in text, text
    for p in cmd.params:
        if getattr(p, "is_flag", False) and p.param_type_name == "option":
            for opt in p.opts:
                assert opt in text and not re.search(rf"{re.escape(opt)} <", text), f"{opt}:\n{text}"


@pytest.mark.parametrize(("path", "cmd"), [(p, c) for p, c in COMMANDS if any("--jobs" in getattr(q, "opts", ())
                                                                              for q in c.params)], ids=lambda x: str(x))
def test_jobs_zero_is_a_usage_error_for_every_command(path: list[str], cmd: Any) -> None:
    (jobs,) = [p for p in cmd.params if "--jobs" in getattr(p, "opts", ())]
    assert jobs.opts == ["--jobs", "-j"]
    r = runner.invoke(app, [*path, "--jobs", "0"])
    assert r.exit_code == 2, r.output
    assert "--jobs" in r.output


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=_ids())
def test_every_listing_and_result_command_takes_json(path: list[str], cmd: Any) -> None:
    has = any("--json" in getattr(p, "opts", ()) for p in cmd.params)
    assert has != (" ".join(path) in NO_RESULT), f"casekit {' '.join(path)}"


def test_shell_completion_is_offered() -> None:
    text = runner.invoke(app, ["--help"]).output
    assert "--install-completion" in text and "--show-completion" in text
    # run from bash, as a user would: the shell is detected from the parent process (shellingham),
    # which under pytest's runner is Python ("Shell  not supported"); a second command keeps bash
    # the parent (bash -c execs a lone command in its own place, and then the parent is pytest's
    # Python or whatever started it: the test failed when pytest was started by a non-bash parent)
    import subprocess
    import sys

    r = subprocess.run(["bash", "-c", f"'{sys.executable}' -m casekit --show-completion; exit $?"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "complete" in r.stdout, r.stdout + r.stderr


def test_force_is_a_flag() -> None:
    """``--force`` takes no value: ``--force true`` is a usage error (exit 2), not a file named true."""
    r = runner.invoke(app, ["new", "--family", "heat", "--force", "true"])
    assert r.exit_code == 2
    assert "true" in r.output
