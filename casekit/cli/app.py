"""The Typer application object shared by the command modules.

Errors with a reason (:class:`~casekit.errors.CasekitError`) are turned into one printed line
naming the file, case, field and what would be valid, and exit status 1 (2 for usage errors),
here at the root group, so every way of invoking the app (console script, tests) behaves alike.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from casekit.errors import CasekitError, UsageError


#: markup is off everywhere: messages quote untrusted text (case sources, submissions' output), which
#: must print as written and can never break the output; styles are given as Text styles
def _width(stream: Any) -> int | None:
    """The terminal's width, or no limit when the output is piped or redirected (tables are then
    printed whole, for scripts to read, instead of cut to 80 columns)."""
    try:
        return None if stream.isatty() else 100_000
    except (AttributeError, ValueError):
        return 100_000


console = Console(highlight=False, soft_wrap=True, markup=False, width=_width(sys.stdout))
console_err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, width=_width(sys.stderr))


def print_json(data: Any) -> None:
    """Machine-readable output (``--json``): one JSON document on stdout, nothing else there."""
    from casekit.jsonio import dumps

    text = dumps(data, indent=2)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


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


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr (never on stdout, which carries the data); yields
    ``advance(done, total)``.  Silent when stderr is not a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label, markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console_err, transient=True, disable=not console_err.is_terminal) as bar:
        task = bar.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance
