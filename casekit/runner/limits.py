"""Resource limits of one isolated run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Limits of one run.  The local runner enforces memory, processes and CPU share per run (a
    cgroup: memory counts the run's tmpfs scratch too), scratch sizes per tmpfs, and CPU time,
    file size and open files per process."""

    timeout_sec: float = 300.0
    memory_mb: int = 4096
    cpu_sec: int | None = None  # default: twice the timeout plus a margin
    file_mb: int = 512
    disk_mb: int = 1024
    nproc: int = 256
    nofile: int = 512
    #: CPU share of the run (cores); a single-threaded solver never feels a quota of 1
    cpus: float = 1.0

    @property
    def cpu(self) -> int:
        return self.cpu_sec if self.cpu_sec is not None else int(2 * self.timeout_sec + 30)
