"""SIGTERM as Ctrl-C, so that a cancelled command cleans up as an interrupted one does.

A process killed by SIGTERM runs no ``finally`` clause: an import killed mid-way left its staging
directory beside the case sources (``cases/.pdeagent-bench-import-*``), a build its workers.  While
:func:`interrupt_on_sigterm` is active, SIGTERM raises KeyboardInterrupt instead: ``finally``
clauses and context managers run, and the command ends as after Ctrl-C -- with the exit status of
a process killed by SIGTERM (143), so that a scheduler still sees a cancellation, not a failure.
``casekit``'s entry point holds it for every command; commands that also run in-process (tests, a
caller's own process) hold it themselves, and the caller's handler is restored after them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

#: the exit status of a command ended by SIGTERM (128 + 15, as the shell reports a killed process)
TERMINATED = 143
_received: list[int] = []


def terminated() -> bool:
    """Whether SIGTERM arrived while :func:`interrupt_on_sigterm` was active in this process."""
    return bool(_received)


@contextmanager
def interrupt_on_sigterm() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the block runs (outside the main thread, where no
    handler can be set, the caller's handling stays)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        _received.append(signum)
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
