"""The ``casekit`` command line.

Each command group lives in its own module and registers itself on :data:`app`.  Errors with a
reason (:class:`~casekit.errors.CasekitError`) are printed as one line naming the file, case,
field and what would be valid, never as a traceback; exit status 1 for failures, 2 for usage.
"""

from __future__ import annotations

import sys

import typer

from casekit.cli.app import app, console_err
from casekit.errors import CasekitError, UsageError

# command modules register themselves on import (order = order in --help)
from casekit.cli import validate as _validate  # noqa: E402,F401  isort: skip
from casekit.cli import domain as _domain  # noqa: E402,F401  isort: skip


def main() -> None:
    try:
        app(standalone_mode=False)
    except UsageError as exc:
        console_err.print(f"[red]error:[/red] {exc}", highlight=False, markup=True)
        sys.exit(2)
    except CasekitError as exc:
        console_err.print(f"[red]error:[/red] {exc}", highlight=False)
        for p in exc.problems[1:]:
            console_err.print(f"       {p.render()}", highlight=False)
        sys.exit(1)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        console_err.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        console_err.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
