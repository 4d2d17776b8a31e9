"""The ``casekit`` command line.

Each command group lives in its own module and registers itself on :data:`app`.  Errors with a
reason (:class:`~casekit.errors.CasekitError`) are printed as one line naming the file, case,
field and what would be valid, never as a traceback; exit status 1 for failures, 2 for usage.
"""

from __future__ import annotations

import sys

from casekit.cli.app import app, console_err
from casekit.errors import CasekitError, UsageError

# command modules register themselves on import (order = order in --help)
from casekit.cli import validate as _validate  # noqa: E402,F401  isort: skip
from casekit.cli import author as _author  # noqa: E402,F401  isort: skip
from casekit.cli import domain as _domain  # noqa: E402,F401  isort: skip


def main() -> None:
    try:
        app()  # standalone mode: usage errors print and exit 2 there
    except UsageError as exc:
        console_err.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(2)
    except CasekitError as exc:
        console_err.print(f"[red]error:[/red] {exc}", highlight=False)
        for p in exc.problems[1:]:
            console_err.print(f"       {p.render()}", highlight=False)
        sys.exit(1)
