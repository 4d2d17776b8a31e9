"""The Typer application object shared by the command modules."""

from __future__ import annotations

import typer
from rich.console import Console

app = typer.Typer(
    name="casekit",
    help=(
        "Build, validate, package and score benchmarks in which AI agents write "
        "finite-element solvers for PDEs."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
console = Console(highlight=False, soft_wrap=True)
console_err = Console(stderr=True, highlight=False, soft_wrap=True)


def _print_version(value: bool) -> None:
    if value:
        from casekit import __version__

        console.print(__version__)
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the casekit version and exit.", is_eager=True,
        callback=_print_version,
    ),
) -> None:
    """Build, validate, package and score benchmarks in which AI agents write
    finite-element solvers for PDEs."""
