"""``casekit env``: which track environments are usable here, and installing them."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from casekit.cli.app import app, command_group, console, json_option, print_json

env_app = command_group("Track environments: check what is usable here, install what is missing.")
app.add_typer(env_app, name="env")


@env_app.command("check")
def env_check(
    names: list[str] = typer.Argument(None, help="Environments to check (default: all)."),
    as_json: bool = json_option("the environments' and the runners' status"),
) -> None:
    """Report, per environment, whether it is usable and why not, and which runners (where
    submissions run) are usable here."""
    from casekit.envs import ENVIRONMENTS
    from casekit.runner.base import RUNNERS

    envs = [ENVIRONMENTS.get(n) for n in names] if names else [e for _, e in ENVIRONMENTS.items()]
    statuses = [e.check() for e in envs]
    runners = [(name, *runner.available()) for name, runner in RUNNERS.items()]  # where untrusted code may run
    if as_json:
        print_json({"environments": [s.__dict__ for s in statuses],
                    "runners": [{"name": n, "usable": ok, "reason": why} for n, ok, why in runners]})
        return
    table = Table(show_edge=False)
    for col in ("environment", "usable", "details", "reason"):
        table.add_column(col)
    for s in statuses:
        table.add_row(s.name, Text("yes", "green") if s.usable else Text("no", "red"),
                      ", ".join(f"{k}={v}" for k, v in s.details.items()), s.reason)
    console.print(table)
    for name, ok, why in runners:
        console.print(Text.assemble(f"runner {name}: ", ("usable" if ok else "not usable", "green" if ok else "red"),
                                    f" ({why})"))


@env_app.command("install")
def env_install(
    name: str = typer.Argument(..., help="A track's environment (casekit env check lists them)."),
    force: bool = typer.Option(False, "--force", help="Redo every step, even finished ones."),
    log: Path | None = typer.Option(None, "--log", help="Log file (default: in the environment's directory)."),
) -> None:
    """Install an environment step by step (resumable; each step's output goes to the log)."""
    from casekit.envs import ENVIRONMENTS

    env = ENVIRONMENTS.get(name)
    console.print(f"installing {name}: {env.description} (recipe {env.recipe_hash()})")
    path = env.install(log, force, progress=lambda step, state, seconds: console.print(
        f"  {step}: {state}" + (f" in {seconds:.0f} s" if state == "done" else ""), markup=False))
    status = env.check()
    console.print(f"{name}: {'usable' if status.usable else 'NOT usable: ' + status.reason}; log {path}")
    raise typer.Exit(0 if status.usable else 1)
