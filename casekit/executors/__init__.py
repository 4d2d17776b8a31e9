"""Where builds and evaluations run: a registry of executors.

An executor maps a module-level function over work items (cases, case batches) and hands each
result back to the caller, in the caller's process, as it arrives -- so the caller writes results
atomically as they come and a killed run keeps what was written.  ``local`` (default) is a
thread pool on this machine; ``dask`` runs the items as tasks on a Dask distributed cluster (a
``LocalCluster`` when no scheduler address is given).
"""

from __future__ import annotations

from casekit.executors.base import Executor, ExecutorOptions
from casekit.executors.dask import DaskExecutor
from casekit.executors.local import LocalExecutor
from casekit.registry import Registry

EXECUTORS: Registry = Registry("executor")
EXECUTORS.register("local", LocalExecutor)
EXECUTORS.register("dask", DaskExecutor)


def make(options: ExecutorOptions) -> Executor:
    """The executor ``options.kind`` names (a clear error for an unknown one)."""
    return EXECUTORS.get(options.kind)(options)  # type: ignore[no-any-return]


__all__ = ["EXECUTORS", "Executor", "ExecutorOptions", "make"]
