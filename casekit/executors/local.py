"""The default executor: a pool of threads on this machine (each item's heavy work runs in its
own sandboxed processes; the threads only wait for them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from casekit.executors.base import ExecutorOptions


class LocalExecutor:
    name = "local"

    def __init__(self, options: ExecutorOptions | None = None) -> None:
        self.jobs = max(1, (options or ExecutorOptions()).jobs)

    def run(self, fn: Callable[[Any], Any], items: Sequence[Any],
            on_result: Callable[[Any, Any], None]) -> None:
        from casekit.runner import cgroups

        pool = ThreadPoolExecutor(max_workers=self.jobs)
        pending: dict[Future[Any], Any] = {pool.submit(fn, item): item for item in items}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    on_result(pending.pop(f), f.result())
        except BaseException:
            for f in pending:
                f.cancel()
            cgroups.kill_live()  # the runs in flight end now, not when they would have
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
