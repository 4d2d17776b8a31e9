"""The Typer application object shared by the command modules.

Errors with a reason (:class:`~casekit.errors.CasekitError`) are turned into one printed line
naming the file, case, field and what would be valid, and exit status 1 (2 for usage errors),
here at the root group, so every way of invoking the app (console script, tests) behaves alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import typer
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from casekit.cli.output import Output, console, console_err, print_json
from casekit.errors import CasekitError, UnknownName, UsageError
from casekit.suggest import did_you_mean

#: the consoles and the JSON printer live in casekit.cli.output; importable from here as before
__all__ = ["APP_SETTINGS", "EXECUTOR_HELP", "NAMES", "SCHEDULER_HELP", "Output", "app", "command_group", "console",
           "console_err", "executor_options", "jobs_option", "json_option", "listing_names", "print_json"]


def json_option(what: str = "the result") -> Any:
    """``--json`` of every listing and result command (one definition): ``what`` as one JSON
    document on stdout, every other line on stderr (:class:`~casekit.cli.output.Output`)."""
    return typer.Option(False, "--json", help=f"Print {what} as one JSON document on stdout (progress and notes "
                        "go to stderr).")


def jobs_option(default: int, what: str) -> Any:
    """``--jobs``/``-j`` of every command that runs work in parallel (one definition, one
    validator: at least 1, else a usage error, exit status 2)."""
    return typer.Option(default, "--jobs", "-j", min=1, help=what)


#: where an option's help lists a registry's names (:func:`listing_names`)
NAMES = "{names}"


def listing_names(**names: Callable[[], Iterable[str]]) -> type[TyperCommand]:
    """A command class whose options' help lists what a registry holds, read from the registry when
    the help is shown -- never a hand-kept list, and no registry (some import their plugins and
    numpy) is loaded by every other command line.  ``names`` maps an option's parameter name to
    the registry's names; that option's help says where they go with ``{names}``."""

    class Listing(TyperCommand):
        def format_help(self, ctx: Any, formatter: Any) -> None:
            for p in self.params:
                if p.name in names and NAMES in (getattr(p, "help", None) or ""):
                    p.help = p.help.replace(NAMES, ", ".join(names[p.name]()))  # type: ignore[attr-defined]
            super().format_help(ctx, formatter)

    return Listing


class _Root(TyperGroup):
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except CasekitError as exc:
            # the message may quote untrusted text: printed as text, never as markup
            problem = exc.as_problem()
            if isinstance(exc, UnknownName):  # a mistyped name: the close ones first
                problem = dataclasses.replace(problem, message=problem.message + did_you_mean(exc.message, exc.valid))
            console_err.print(Text.assemble(("error:", "red"), " ", problem.render()), highlight=False)
            for p in exc.problems[1:]:
                console_err.print(f"       {p.render()}", highlight=False, markup=False)
            ctx.exit(2 if isinstance(exc, UsageError) else 1)


#: how every Typer app of the command line is configured (the root and each command group): plain
#: click help -- a flag reads as a plain flag (``--force``; Typer's rich help gives every option a
#: type, ``--force <bool>``, as if it took a value), help text is printed as written (rich markup
#: would swallow "[s]" in "runtime [s]"), errors are one plain line
APP_SETTINGS: dict[str, Any] = {"rich_markup_mode": None, "pretty_exceptions_enable": False}


def command_group(help: str) -> typer.Typer:
    """A group of commands (``casekit env ...``), configured as the root is."""
    return typer.Typer(help=help, no_args_is_help=True, **APP_SETTINGS)


app = typer.Typer(
    name="casekit",
    cls=_Root,
    help=(
        "Build, validate, package and score benchmarks in which AI agents write "
        "finite-element solvers for PDEs."
    ),
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    **APP_SETTINGS,
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


EXECUTOR_HELP = ("Where the work runs: local (--jobs worker processes for a build, threads for an evaluation) "
                 "or dask (a Dask cluster).")
SCHEDULER_HELP = ("Address of a running Dask scheduler (tcp://host:8786) for --executor dask; without it a "
                  "LocalCluster of --jobs single-threaded workers is started here.")


def executor_options(kind: str, scheduler: str | None, jobs: int) -> Any:
    """--executor/--scheduler/--jobs as ExecutorOptions (unknown names are usage errors)."""
    from casekit.executors import EXECUTORS, ExecutorOptions

    if kind not in EXECUTORS:
        raise UsageError(f"unknown executor {kind!r}", valid=", ".join(EXECUTORS.names()))
    if scheduler and kind != "dask":
        raise UsageError("--scheduler is an address for --executor dask", valid="--executor dask --scheduler ADDR")
    return ExecutorOptions(kind=kind, jobs=jobs, scheduler=scheduler or None)
