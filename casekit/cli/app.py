"""The Typer application object shared by the command modules.

Errors with a reason (:class:`~casekit.errors.CasekitError`) are turned into one printed line
naming the file, case, field and what would be valid, and exit status 1 (2 for usage errors),
here at the root group, so every way of invoking the app (console script, tests) behaves alike.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from casekit.errors import CasekitError, UsageError

#: markup is off everywhere: messages quote untrusted text (case sources, submissions' output), which
#: must print as written and can never break the output; styles are given as Text styles
console = Console(highlight=False, soft_wrap=True, markup=False)
console_err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)


class _Root(TyperGroup):
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except CasekitError as exc:
            # the message may quote untrusted text: printed as text, never as markup
            console_err.print(Text.assemble(("error:", "red"), " ", str(exc)), highlight=False)
            for p in exc.problems[1:]:
                console_err.print(f"       {p.render()}", highlight=False, markup=False)
            ctx.exit(2 if isinstance(exc, UsageError) else 1)


app = typer.Typer(
    name="casekit",
    cls=_Root,
    help=(
        "Build, validate, package and score benchmarks in which AI agents write "
        "finite-element solvers for PDEs."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


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
