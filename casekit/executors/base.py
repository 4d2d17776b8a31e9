"""What an executor is: map a function over items, results back in the caller as they arrive."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

I = TypeVar("I")  # noqa: E741 - an item
R = TypeVar("R")


@dataclass(frozen=True)
class ExecutorOptions:
    """``kind``: a registered executor (local, dask); ``jobs``: threads (or processes) of the
    local pool or workers of a Dask ``LocalCluster``; ``scheduler``: the address of a running
    Dask scheduler (``tcp://host:8786``; none: a LocalCluster of ``jobs`` workers)."""

    kind: str = "local"
    jobs: int = 1
    scheduler: str | None = None
    #: local: run the items in ``jobs`` worker processes instead of threads (for work that is
    #: Python in the caller -- a build derives and validates in-process -- not only waiting)
    processes: bool = False


class Executor(Protocol):
    name: str

    def run(self, fn: Callable[[Any], Any], items: Sequence[Any],
            on_result: Callable[[Any, Any], None]) -> None:
        """Call ``fn(item)`` for every item (where and in what order is the executor's choice)
        and ``on_result(item, result)`` in the calling thread as each finishes.  The first error
        (from ``fn`` or ``on_result``) or an interrupt cancels what has not started and is
        raised once the work in flight has stopped.  ``fn`` must be a module-level function and
        the items picklable when the executor runs them in other processes."""
        ...
