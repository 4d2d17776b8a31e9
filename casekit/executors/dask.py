"""Dask distributed: items are tasks on a cluster's workers.

Without a scheduler address casekit starts a ``LocalCluster`` of ``jobs`` single-threaded worker
processes on this machine; with one (``--scheduler tcp://host:8786``) it connects to a running
cluster -- for example one dask-jobqueue starts on Slurm or PBS (see docs/scaling.md).  Every
worker must run one task at a time (``--nthreads 1``): a worker's timed runs never overlap, and
paired timing pairs a submission with its calibration on the worker that runs both.  Workers
need casekit, the track environments and the same paths as this machine for the case sources,
the build directory and the output directory (a shared filesystem, as clusters have).

Results come back to this process as tasks finish; the caller writes them (atomically) as they
arrive, so a killed run keeps everything finished before it and resumes from there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from casekit.errors import CasekitError, UsageError
from casekit.execution import on_shared_machine
from casekit.executors.base import ExecutorOptions


class DaskExecutor:
    name = "dask"

    def __init__(self, options: ExecutorOptions | None = None) -> None:
        self.options = options or ExecutorOptions(kind="dask")

    def _client(self) -> tuple[Any, Any]:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("the dask executor needs dask and distributed",
                             valid="pip install 'casekit[dask]' (or --executor local)") from None
        if self.options.scheduler:
            try:
                client = Client(self.options.scheduler, timeout="30s")
            except OSError as exc:
                raise UsageError(f"no Dask scheduler answers at {self.options.scheduler}: {exc}",
                                 valid="the address a running scheduler prints (tcp://host:8786)") from None
            return client, None
        cluster = LocalCluster(n_workers=max(1, self.options.jobs), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster), cluster

    @staticmethod
    def check_workers(client: Any) -> None:
        """Every worker runs one task at a time (a worker's timed runs must not overlap)."""
        workers = client.scheduler_info().get("workers", {})
        if not workers:
            raise UsageError("the Dask cluster has no workers", valid="start workers with --nthreads 1")
        busy = sorted(addr for addr, w in workers.items() if int(w.get("nthreads", 1)) != 1)
        if busy:
            raise UsageError(f"Dask workers {', '.join(busy[:3])} run several tasks at once, so their timed runs "
                             "would overlap", valid="workers started with --nthreads 1")

    @staticmethod
    def workers_per_host(client: Any) -> int:
        """The most workers on one host of the cluster (they share its cores)."""
        hosts: dict[str, int] = {}
        for w in client.scheduler_info().get("workers", {}).values():
            host = str(w.get("host", ""))
            hosts[host] = hosts.get(host, 0) + 1
        return max(hosts.values(), default=1)

    def run(self, fn: Callable[[Any], Any], items: Sequence[Any],
            on_result: Callable[[Any, Any], None]) -> None:
        if not items:
            return
        from distributed import as_completed

        client, cluster = self._client()
        try:
            self.check_workers(client)
            task = partial(on_shared_machine, fn, self.workers_per_host(client))
            futures = {client.submit(task, item, pure=False, key=f"casekit-{i}"): item
                       for i, item in enumerate(items)}
            try:
                for future in as_completed(futures):
                    if future.status == "error":
                        exc = future.exception()
                        if isinstance(exc, CasekitError):
                            raise exc
                        raise CasekitError(f"a Dask task failed: {type(exc).__name__}: {exc}")
                    on_result(futures[future], future.result())
            except BaseException:
                client.cancel(list(futures), force=True)
                raise
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
