"""Resource limits of one isolated run."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Wall-clock timeout, address space, CPU time, file size, scratch disk, processes, files."""

    timeout_sec: float = 300.0
    memory_mb: int = 4096
    cpu_sec: int | None = None  # default: twice the timeout plus a margin
    file_mb: int = 512
    disk_mb: int = 1024
    nproc: int = 256
    nofile: int = 512

    @property
    def cpu(self) -> int:
        return self.cpu_sec if self.cpu_sec is not None else int(2 * self.timeout_sec + 30)
