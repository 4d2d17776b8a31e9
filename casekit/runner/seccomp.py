"""The seccomp filter of every local run: kernel state that outlives a process is out of reach.

Namespaces give a run its own files, processes, network and IPC, but some kernel state is
keyed by user id and outlives every process: the **keyrings** (a run could store its answer
with ``add_key`` and the next run, the next attempt or the next evaluation read it with
``keyctl``) and the **page cache** of the read-only system files (a run could encode bits by
evicting pages with ``fadvise``/``readahead``, or read which pages are resident with
``cachestat``, or with a read that must not wait for the disk: ``preadv2``/``pwritev2`` with
``RWF_NOWAIT`` fail with EAGAIN on a page that is not cached, and Linux AIO carries the same
flag).  These system calls fail with EPERM in a run, as do the interfaces that bypass or observe
other processes (``io_uring``, which executes such operations outside seccomp's view,
``perf_event_open``, ``bpf``, ``userfaultfd``), and foreign system-call ABIs (i386, x32).
``preadv2``/``pwritev2`` are allowed without flags only (any flag -- ``RWF_NOWAIT``,
``RWF_DONTCACHE``, ... -- fails with EOPNOTSUPP, the kernel's answer for a flag it does not
support, so programs fall back to plain reads).

New **user namespaces** are denied in every mode (in a user namespace of its own a run would have
every capability, and the kernel's whole namespaced attack surface): ``unshare`` and ``clone``
with ``CLONE_NEWUSER`` fail with EPERM, and ``clone3``, whose flags seccomp cannot see (they are
in memory), fails with ENOSYS -- the C library then falls back to ``clone`` (threads, ``fork``
and ``posix_spawn`` never ask for a user namespace).

The filter is classic BPF, built here without libseccomp and handed to bubblewrap
(``--seccomp FD``).  Supported: x86_64 and aarch64 (both little-endian: the low 32 bits of
argument ``i`` are at offset ``16 + 8 i`` of ``struct seccomp_data``); elsewhere the local
runner refuses to run.
"""

from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: nr at offset 0, arch at offset 4, args[6] (u64) from offset 16
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000
CLONE_NEWUSER = 0x10000000

#: the denied system calls, by name (numbers per architecture below)
DENIED = ("add_key", "request_key", "keyctl", "fadvise64", "readahead", "cachestat", "io_uring_setup",
          "io_uring_enter", "io_uring_register", "perf_event_open", "bpf", "userfaultfd",
          "io_setup", "io_submit", "io_getevents", "io_cancel", "io_destroy", "io_pgetevents")
#: allowed only when the flags argument (its index) is 0: RWF_NOWAIT reads page-cache residency
FLAGS_MUST_BE_ZERO = {"preadv2": 5, "pwritev2": 5}
#: denied when the flags argument (its index) asks for a new user namespace
NO_NEW_USERNS = {"unshare": 0, "clone": 0}
#: ENOSYS: their flags are in memory, out of seccomp's sight; the C library falls back to clone
UNSUPPORTED = ("clone3",)
_NUMBERS = {
    "x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250, "fadvise64": 221, "readahead": 187,
               "cachestat": 451, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
               "perf_event_open": 298, "bpf": 321, "userfaultfd": 323,
               "io_setup": 206, "io_destroy": 207, "io_getevents": 208, "io_submit": 209, "io_cancel": 210,
               "io_pgetevents": 333, "preadv2": 327, "pwritev2": 328, "unshare": 272, "clone": 56, "clone3": 435},
    "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219, "fadvise64": 223, "readahead": 213,
                "cachestat": 451, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
                "perf_event_open": 241, "bpf": 280, "userfaultfd": 282,
                "io_setup": 0, "io_destroy": 1, "io_submit": 2, "io_cancel": 3, "io_getevents": 4,
                "io_pgetevents": 292, "preadv2": 286, "pwritev2": 287, "unshare": 97, "clone": 220, "clone3": 435},
}


class SeccompUnavailable(Exception):
    pass


def _arg_low(index: int) -> int:
    """Offset of the low 32 bits of system-call argument ``index`` (little-endian)."""
    return 16 + 8 * index


class _Program:
    """A tiny assembler: conditional jumps name their targets by label (resolved at the end)."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def ld(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, jt: str | int = 0, jf: str | int = 0) -> None:
        self.code.append((op, jt, jf, k))

    def ret(self, value: int) -> None:
        self.code.append((_RET_K, 0, 0, value))

    def assemble(self) -> bytes:
        out = []
        for i, (code, jt, jf, k) in enumerate(self.code):
            offsets = []
            for target in (jt, jf):
                off = self.labels[target] - i - 1 if isinstance(target, str) else target
                assert isinstance(off, int) and 0 <= off <= 255, (i, target)
                offsets.append(off)
            out.append(struct.pack("=HBBI", code, offsets[0], offsets[1], k))
        return b"".join(out)


def program(machine: str | None = None) -> bytes:
    """The BPF program (bytes of ``struct sock_filter``) for this machine's architecture."""
    arch = machine or platform.machine()
    if arch not in _NUMBERS:
        raise SeccompUnavailable(f"no seccomp filter for the {arch} architecture (supported: "
                                 f"{', '.join(_NUMBERS)})")
    nr = _NUMBERS[arch]
    p = _Program()
    # a foreign ABI (i386 on x86_64, ...) gets ENOSYS for every call
    p.ld(4)
    p.jump(_JEQ_K, AUDIT_ARCH[arch], 0, "enosys")
    p.ld(0)
    if arch == "x86_64":  # x32 system calls are the native numbers with this bit set
        p.jump(_JSET_K, X32_SYSCALL_BIT, "eperm", 0)
    for name in DENIED:
        p.jump(_JEQ_K, nr[name], "eperm", 0)
    for name in UNSUPPORTED:
        p.jump(_JEQ_K, nr[name], "enosys", 0)
    for name in FLAGS_MUST_BE_ZERO:
        p.jump(_JEQ_K, nr[name], f"check-{name}", 0)
    for name in NO_NEW_USERNS:
        p.jump(_JEQ_K, nr[name], f"check-{name}", 0)
    p.ret(RET_ALLOW)
    # rwf_t is an int: the kernel reads only the low 32 bits of the register
    for name, index in FLAGS_MUST_BE_ZERO.items():
        p.label(f"check-{name}")
        p.ld(_arg_low(index))
        p.jump(_JEQ_K, 0, "allow", "eopnotsupp")
    # CLONE_NEWUSER is in the low 32 bits of the (unsigned long) flags
    for name, index in NO_NEW_USERNS.items():
        p.label(f"check-{name}")
        p.ld(_arg_low(index))
        p.jump(_JSET_K, CLONE_NEWUSER, "eperm", "allow")
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("eperm")
    p.ret(RET_ERRNO | errno.EPERM)
    p.label("eopnotsupp")
    p.ret(RET_ERRNO | errno.EOPNOTSUPP)
    p.label("enosys")
    p.ret(RET_ERRNO | errno.ENOSYS)
    return p.assemble()
