"""The seccomp filter of every local run: kernel state that outlives a process is out of reach.

Namespaces give a run its own files, processes, network and IPC, but some kernel state is
keyed by user id and outlives every process: the **keyrings** (a run could store its answer
with ``add_key`` and the next run, the next attempt or the next evaluation read it with
``keyctl``) and the **page cache** of the read-only system files (a run could encode bits by
evicting pages with ``fadvise``/``readahead`` or read residency with ``cachestat``).  These
system calls fail with EPERM in a run, as do the interfaces that bypass or observe other
processes (``io_uring``, which executes such operations outside seccomp's view,
``perf_event_open``, ``bpf``, ``userfaultfd``), and foreign system-call ABIs (i386, x32).

The filter is classic BPF, built here without libseccomp and handed to bubblewrap
(``--seccomp FD``).  Supported: x86_64 and aarch64; elsewhere the local runner refuses to run.
"""

from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: nr at offset 0, arch at offset 4
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

#: the denied system calls, by name (numbers per architecture below)
DENIED = ("add_key", "request_key", "keyctl", "fadvise64", "readahead", "cachestat", "io_uring_setup",
          "io_uring_enter", "io_uring_register", "perf_event_open", "bpf", "userfaultfd")
_NUMBERS = {
    "x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250, "fadvise64": 221, "readahead": 187,
               "cachestat": 451, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
               "perf_event_open": 298, "bpf": 321, "userfaultfd": 323},
    "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219, "fadvise64": 223, "readahead": 213,
                "cachestat": 451, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
                "perf_event_open": 241, "bpf": 280, "userfaultfd": 282},
}


class SeccompUnavailable(Exception):
    pass


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes:
    """The BPF program (bytes of ``struct sock_filter``) for this machine's architecture."""
    arch = machine or platform.machine()
    if arch not in _NUMBERS:
        raise SeccompUnavailable(f"no seccomp filter for the {arch} architecture (supported: "
                                 f"{', '.join(_NUMBERS)})")
    numbers = [_NUMBERS[arch][name] for name in DENIED]
    deny_eperm = RET_ERRNO | errno.EPERM
    deny_foreign = RET_ERRNO | errno.ENOSYS
    body: list[bytes] = []
    # 0: A = arch; a foreign ABI (i386 on x86_64, ...) gets ENOSYS for every call
    n = len(numbers)
    x32 = arch == "x86_64"
    # layout: [ld arch][jeq native ? 0 : to_foreign][ld nr][jset x32?][jeq nr_i ...][ret allow][ret eperm][ret enosys]
    rest = 1 + (1 if x32 else 0) + n + 1 + 1  # instructions after the arch check up to ret eperm
    body.append(_insn(_LD_W_ABS, 0, 0, 4))
    body.append(_insn(_JEQ_K, 0, rest, AUDIT_ARCH[arch]))
    body.append(_insn(_LD_W_ABS, 0, 0, 0))
    if x32:  # x32 system calls are the native numbers with this bit set
        body.append(_insn(_JSET_K, n + 1, 0, X32_SYSCALL_BIT))
    for i, nr in enumerate(numbers):
        body.append(_insn(_JEQ_K, n - i, 0, nr))  # jump to "ret eperm"
    body.append(_insn(_RET_K, 0, 0, RET_ALLOW))
    body.append(_insn(_RET_K, 0, 0, deny_eperm))
    body.append(_insn(_RET_K, 0, 0, deny_foreign))
    return b"".join(body)
