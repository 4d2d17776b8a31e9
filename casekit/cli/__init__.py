"""The ``casekit`` command line.

Each command group lives in its own module and registers itself on :data:`app` when imported
here (the import order is the order in ``--help``).
"""

from __future__ import annotations

from casekit.cli.app import app

from casekit.cli import validate as _validate  # noqa: F401  isort: skip
from casekit.cli import author as _author  # noqa: F401  isort: skip
from casekit.cli import importer as _importer  # noqa: F401  isort: skip
from casekit.cli import domain as _domain  # noqa: F401  isort: skip
from casekit.cli import build as _build  # noqa: F401  isort: skip
from casekit.cli import answerable as _answerable  # noqa: F401  isort: skip
from casekit.cli import evaluate as _evaluate  # noqa: F401  isort: skip
from casekit.cli import report as _report  # noqa: F401  isort: skip
from casekit.cli import prompt as _prompt  # noqa: F401  isort: skip
from casekit.cli import package as _package  # noqa: F401  isort: skip
from casekit.cli import campaign as _campaign  # noqa: F401  isort: skip
from casekit.cli import demo as _demo  # noqa: F401  isort: skip
from casekit.cli import env as _env  # noqa: F401  isort: skip
from casekit.cli import track as _track  # noqa: F401  isort: skip

__all__ = ["app", "main"]


def main() -> None:
    from casekit.cli.signals import TERMINATED, interrupt_on_sigterm, terminated

    with interrupt_on_sigterm():  # a killed command runs its cleanup (staging directories, workers)
        try:
            app()
        except (SystemExit, KeyboardInterrupt):
            if terminated():  # ended by SIGTERM, cleaned up: say so, not click's "Aborted!" status 1
                raise SystemExit(TERMINATED) from None
            raise
