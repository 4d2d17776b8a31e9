"""The default executor: a pool on this machine.

Threads by default: each item's heavy work runs in its own sandboxed processes and the threads
only wait for them (evaluation).  With ``processes`` (builds, whose derivation and validation are
Python in the caller and would hold one interpreter lock) the items run in ``jobs`` worker
processes started by a fork server; their results come back to the caller as they finish, like
Dask's.  An interrupt stops every worker's sandboxed runs before it returns.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from typing import Any

from casekit.executors.base import ExecutorOptions


def _stop(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _worker_init() -> None:
    """A worker process ends its work as an interrupt would when the pool terminates it."""
    signal.signal(signal.SIGTERM, _stop)


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    """``fn(item)`` in a worker process; an interrupt kills the sandboxed runs it started."""
    from casekit.runner import cgroups

    try:
        return fn(item)
    except KeyboardInterrupt:
        cgroups.kill_live()
        raise


class LocalExecutor:
    name = "local"

    def __init__(self, options: ExecutorOptions | None = None) -> None:
        options = options or ExecutorOptions()
        self.jobs = max(1, options.jobs)
        self.processes = options.processes and self.jobs > 1

    def _pool(self) -> Executor:
        if self.processes:
            return ProcessPoolExecutor(max_workers=self.jobs, mp_context=multiprocessing.get_context("forkserver"),
                                       initializer=_worker_init)
        return ThreadPoolExecutor(max_workers=self.jobs)

    def run(self, fn: Callable[[Any], Any], items: Sequence[Any],
            on_result: Callable[[Any, Any], None]) -> None:
        from casekit.runner import cgroups

        if not items:
            return
        pool = self._pool()
        pending: dict[Future[Any], Any] = {
            (pool.submit(_call, fn, item) if self.processes else pool.submit(fn, item)): item for item in items}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    on_result(pending.pop(f), f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            if self.processes:
                for proc in list(getattr(pool, "_processes", {}).values()):  # each kills its runs
                    proc.terminate()
            cgroups.kill_live()  # the runs in flight end now, not when they would have
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
