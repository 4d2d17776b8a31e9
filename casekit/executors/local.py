"""The default executor: a pool on this machine.

Threads by default: each item's heavy work runs in its own sandboxed processes and the threads
only wait for them (evaluation).  With ``processes`` (builds, whose derivation and validation are
Python in the caller and would hold one interpreter lock) the items run in ``jobs`` worker
processes started by a fork server; their results come back to the caller as they finish, like
Dask's.  An interrupt, an error or a worker that dies ends every worker (each kills its sandboxed
runs first) before the call returns.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any

from casekit.errors import CasekitError
from casekit.execution import on_shared_machine
from casekit.executors.base import ExecutorOptions


def _die(signum: int, frame: Any) -> None:
    """SIGTERM in a worker: kill the sandboxed runs it started (their own sessions, which only
    this process knows) and exit at once -- never go back to the queue for another item."""
    from casekit.runner import cgroups

    try:
        cgroups.kill_live()
    finally:
        os._exit(1)


def _worker_init() -> None:
    """Workers leave Ctrl-C to the caller (which terminates them) and die on SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _die)


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
        task = partial(on_shared_machine, fn, self.jobs)
        pending: dict[Future[Any], Any] = {pool.submit(task, item): item for item in items}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    on_result(pending.pop(f), f.result())
        except BaseException as exc:
            for f in pending:
                f.cancel()
            if self.processes:
                _stop_workers(pool)
                if isinstance(exc, BrokenProcessPool):
                    raise CasekitError("a worker process died while building (killed for memory, or a crash in a "
                                       "library); finished cases are kept and a rerun resumes",
                                       valid="--jobs 1 to see which case, or more memory") from None
            else:
                cgroups.kill_live()  # the runs in flight end now, not when they would have
                pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)


def _stop_workers(pool: Executor) -> None:
    """Terminate every worker (each kills its runs and exits), then reap them; a worker that
    does not exit within 10 s is killed, so an interrupted or broken pool never hangs."""
    procs = list(getattr(pool, "_processes", {}).values())
    for proc in procs:
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
