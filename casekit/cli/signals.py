"""SIGTERM as Ctrl-C, so that a cancelled command cleans up as an interrupted one does.

A process killed by SIGTERM runs no ``finally`` clause: an import killed mid-way left its staging
directory beside the case sources (``cases/.pdeagent-bench-import-*``), a build its workers.  While
:func:`interrupt_on_sigterm` is active, SIGTERM raises KeyboardInterrupt instead: ``finally``
clauses and context managers run, and the command ends as after Ctrl-C.  ``casekit``'s entry point
holds it for every command; commands that also run in-process (tests, a caller's own process) hold
it themselves, and the caller's handler is restored after them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupt_on_sigterm() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the block runs (outside the main thread, where no
    handler can be set, the caller's handling stays)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: signals are the caller's business
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
