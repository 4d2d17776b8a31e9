"""The local sandbox's parts: refusal where isolation cannot be had, the bubblewrap command line,
per-run cgroups, and the output reader that hostile files cannot fool."""

from __future__ import annotations

import errno
import os
import shutil
import struct
import sys
import textwrap
from pathlib import Path

import pytest

from casekit.errors import CasekitError
from casekit.runner import bwrap, cgroups, seccomp
from casekit.runner.base import RunSpec
from casekit.runner.kinds import local
from casekit.runner.limits import Limits
from casekit.runner.supervisor import TooManyEntries, read_outputs


def test_without_root_cgroup_v1_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(cgroups, "_mounts", lambda: [("/sys/fs/cgroup/memory", "cgroup", {"rw", "memory"}),
                                                      ("/sys/fs/cgroup/pids", "cgroup", {"rw", "pids"})])
    cgroups.manager.cache_clear()
    try:
        with pytest.raises(cgroups.CgroupUnavailable, match="needs root"):
            cgroups.manager()
    finally:
        cgroups.manager.cache_clear()


def test_an_undelegated_v2_cgroup_is_refused_with_the_way_out(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    own = tmp_path / "user.slice"
    own.mkdir()
    (own / "cgroup.subtree_control").write_text("")
    own.chmod(0o555)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(os, "access", lambda p, mode: False)
    monkeypatch.setattr(cgroups, "_mounts", lambda: [(str(tmp_path), "cgroup2", {"rw"})])
    monkeypatch.setattr(cgroups, "_own_paths", lambda: {"": "/user.slice"})
    cgroups.manager.cache_clear()
    try:
        with pytest.raises(cgroups.CgroupUnavailable, match="Delegate=yes"):
            cgroups.manager()
    finally:
        cgroups.manager.cache_clear()
        own.chmod(0o755)


def test_the_runner_refuses_rather_than_run_weaker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(local, "unavailable_reason", lambda: "no usable bubblewrap")
    with pytest.raises(CasekitError, match="untrusted code is not run: no usable bubblewrap"):
        local.LocalRunner().run(RunSpec(["/bin/true"], {}, {}), tmp_path)
    ok, why = local.LocalRunner().available()
    assert not ok and "bubblewrap" in why


def test_the_bubblewrap_command_builds_the_root_from_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap, "binary", lambda: "/usr/bin/bwrap")
    venv = Path(sys.prefix)
    cmd = bwrap.command(argv=[str(venv / "bin" / "python"), "harness.py"], env={"A": "1"}, needs=[venv],
                        masks=[venv / "lib" / "casekit"], work=Path("/w"), scratch_bytes=1 << 20, mode="root",
                        uid=65534, gid=65534, start_fd=7, timing="harness")
    joined = " ".join(cmd)
    for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--new-session",
                 "--clearenv", f"--ro-bind {venv} {venv}", "--bind /w /run/casekit/work",
                 "--size 1048576 --tmpfs /tmp", "--size 1048576 --tmpfs /dev/shm", "--tmpfs /run/casekit/home",
                 f"--perms 0000 --size 4096 --tmpfs {venv / 'lib' / 'casekit'}", "--setenv A 1"):
        assert flag in joined, flag
    # only what was listed is bound: no host directory other than the system's and the environment
    binds = [cmd[i + 1] for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind", "--ro-bind-try")]
    assert all(b.startswith(("/usr", "/etc", "/sys", "/bin", "/sbin", "/lib", str(venv), "/w")) for b in binds), binds
    # root mode: privileges are dropped by setpriv right before the command, with no capabilities
    i = cmd.index("setpriv")
    assert cmd[i:i + 7] == ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs",
                            "--inh-caps=-all", "--bounding-set=-all"]
    assert cmd[-2:] == [str(venv / "bin" / "python"), "harness.py"]
    user = bwrap.command(argv=["/x"], env={}, needs=[], masks=[], work=Path("/w"), scratch_bytes=1, mode="userns",
                         uid=65534, gid=65534, start_fd=7, timing="wrapper")
    assert "--disable-userns" in user and "setpriv" not in user
    assert user[user.index("--") + 1:user.index("--") + 3] == ["/bin/bash", "-c"] and "exec 7>&-" in " ".join(user)


def test_the_output_reader_follows_no_link_and_blocks_on_nothing(tmp_path: Path) -> None:
    (tmp_path / "solution.npz").write_bytes(b"data")
    (tmp_path / "meta.json").symlink_to("/etc/passwd")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big.bin").write_bytes(b"x" * 5000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "solver.py").write_text("input")
    (tmp_path / "bad name").write_text("x")
    skipped: list[str] = []
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        got = dict(read_outputs(fd, {"solver.py"}, 10, 1000, 10_000, skipped, max_entries=100))
    finally:
        os.close(fd)
    assert got == {"solution.npz": b"data"}
    assert sorted(skipped) == ["bad name", "big.bin", "fifo", "meta.json", "sub"]


def test_the_output_listing_is_bounded(tmp_path: Path) -> None:
    """A working directory of more names than the listing holds: nothing is read, the reason is
    raised before the first file (the listing never holds more than its maximum)."""
    for i in range(12):
        (tmp_path / f"f{i}").write_text("x")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert len(dict(read_outputs(fd, set(), 32, 1000, 10_000, [], max_entries=12))) == 12
        with pytest.raises(TooManyEntries, match="more than 11 names"):
            next(read_outputs(fd, set(), 32, 1000, 10_000, [], max_entries=11))
    finally:
        os.close(fd)


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
def test_a_run_that_leaves_too_many_files_fails_with_the_reason(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    from casekit.execution import _checked

    monkeypatch.setattr(local, "MAX_WORK_ENTRIES", 20)
    spec = RunSpec(["/bin/sh", "-c", "for i in $(seq 40); do : > f$i; done; echo out > solution.npz"], {"in.txt": b"x"},
                   {"PATH": "/usr/bin:/bin"}, Limits(timeout_sec=30, memory_mb=256), timing="none")
    r = local.LocalRunner().run(spec, tmp_path / "out")
    assert r.exit_code == 0 and "more than 20 names" in r.output_error, (r.output_error, r.notes, r.stderr)
    assert not (tmp_path / "out" / "solution.npz").exists()
    failure = _checked(None, r, {}, tmp_path / "out", limits=Limits(), runner="local", check=None)  # type: ignore[arg-type]
    assert failure == ("invalid_artifact", r.output_error)


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
def test_a_run_cgroup_limits_and_disappears() -> None:
    cg = cgroups.manager().create(256, 32, 0.5)
    try:
        assert all(d.is_dir() for d in cg.dirs.values())
        assert cg.members() == []
    finally:
        cg.remove()
    assert not any(d.exists() for d in cg.dirs.values())


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
def test_a_trivial_run_reports_exit_timing_and_peak_memory(tmp_path: Path) -> None:
    spec = RunSpec(["/bin/sh", "-c", "echo hi; echo out > result.txt; exit 3"], {"in.txt": b"x"},
                   {"PATH": "/usr/bin:/bin"}, Limits(timeout_sec=30, memory_mb=256), timing="wrapper")
    r = local.LocalRunner().run(spec, tmp_path / "out")
    assert r.exit_code == 3 and r.stdout.strip() == "hi" and r.solve_seconds is not None
    assert (tmp_path / "out" / "result.txt").read_text() == "out\n"
    assert not (tmp_path / "out" / "in.txt").exists()  # inputs are not outputs
    assert any(n.startswith("peak memory") for n in r.notes)


# -- the seccomp filter ----------------------------------------------------------------------
def _verdict(prog: bytes, arch: str, name: str | int, *args: int, audit: int | None = None) -> int:
    """What the classic-BPF ``prog`` returns for one system call (a small interpreter of the
    instructions the filter uses), as the errno it fails with (0: allowed)."""
    nr = seccomp._NUMBERS[arch][name] if isinstance(name, str) else name
    args6 = (list(args) + [0] * 6)[:6]
    data = struct.pack("<iIQ6Q", nr, seccomp.AUDIT_ARCH[arch] if audit is None else audit, 0, *args6)
    insns = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    pc = acc = 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x45):  # jeq / jset
            hit = acc == k if code == 0x15 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:
            return 0 if k == seccomp.RET_ALLOW else k & 0xFFFF
        else:
            raise AssertionError(f"unexpected BPF instruction {code:#x}")


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_seccomp_filter_denies_page_cache_probes_and_aio(arch: str) -> None:
    prog = seccomp.program(arch)
    for name in ("fadvise64", "readahead", "cachestat", "io_uring_setup", "keyctl", "io_setup", "io_submit",
                 "io_getevents", "io_cancel", "io_destroy", "io_pgetevents"):
        assert _verdict(prog, arch, name) == errno.EPERM, name
    rwf_nowait, rwf_dontcache = 0x8, 0x80
    for name in ("preadv2", "pwritev2"):
        assert _verdict(prog, arch, name, 3, 0, 1, 0, 0, 0) == 0  # plain: allowed
        assert _verdict(prog, arch, name, 3, 0, 1, 0, 0, rwf_nowait) == errno.EOPNOTSUPP
        assert _verdict(prog, arch, name, 3, 0, 1, 0, 0, rwf_dontcache | 1) == errno.EOPNOTSUPP
        assert _verdict(prog, arch, name, 3, 0, 1, 0, 0, 1 << 32) == 0  # rwf_t is an int: the kernel sees 0
    assert _verdict(prog, arch, 63) == 0  # an ordinary call (read / umount2)
    assert _verdict(prog, arch, 63, audit=0x40000003) == errno.ENOSYS  # a foreign ABI (i386)
    if arch == "x86_64":
        assert _verdict(prog, arch, 0x40000000 | 0) == errno.EPERM  # x32


def _python_run(tmp_path: Path, code: str) -> str:
    """``code`` run by this interpreter inside the local sandbox; its stdout."""
    venv, base = Path(sys.prefix), Path(os.path.realpath(sys.executable)).parent.parent
    spec = RunSpec([sys.executable, "-I", "probe.py"], {"probe.py": textwrap.dedent(code).encode()},
                   {"PATH": "/usr/bin:/bin"}, Limits(timeout_sec=60, memory_mb=512), timing="none",
                   needs=(venv, base))
    r = local.LocalRunner().run(spec, tmp_path / "out")
    assert r.exit_code == 0 and not r.setup_error, (r.setup_error, r.stderr)
    return r.stdout


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
def test_a_run_cannot_read_page_cache_residency(tmp_path: Path) -> None:
    """RWF_NOWAIT reads (EAGAIN on a page that is not cached) and Linux AIO fail; reads work."""
    out = _python_run(tmp_path, '''
        import ctypes, os
        fd = os.open(os.path.realpath("/usr/bin/env"), os.O_RDONLY)
        buf = bytearray(4096)
        try:
            print("NOWAIT READ", os.preadv(fd, [buf], 0, os.RWF_NOWAIT))
        except OSError as exc:
            print("nowait", exc.errno)
        print("plain", os.preadv(fd, [buf], 0), len(os.pread(fd, 4096, 0)), len(os.read(fd, 4096)))
        libc = ctypes.CDLL(None, use_errno=True)
        ctx = ctypes.c_ulong(0)
        rc = libc.syscall({io_setup}, 1, ctypes.byref(ctx))
        print("AIO" if rc == 0 else "aio", ctypes.get_errno())
    '''.replace("{io_setup}", str(seccomp._NUMBERS[os.uname().machine]["io_setup"])))
    assert f"nowait {errno.EOPNOTSUPP}" in out and "NOWAIT READ" not in out, out
    assert "plain 4096 4096 4096" in out, out
    assert f"aio {errno.EPERM}" in out and "AIO" not in out, out


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_seccomp_filter_denies_new_user_namespaces(arch: str) -> None:
    prog = seccomp.program(arch)
    newuser, newns, sigchld, clone_vm = 0x10000000, 0x00020000, 17, 0x100
    assert _verdict(prog, arch, "unshare", newuser) == errno.EPERM
    assert _verdict(prog, arch, "unshare", newuser | newns) == errno.EPERM
    assert _verdict(prog, arch, "unshare", newns) == 0  # the kernel refuses it without capabilities
    assert _verdict(prog, arch, "clone", newuser | sigchld) == errno.EPERM
    assert _verdict(prog, arch, "clone", sigchld) == 0  # fork
    assert _verdict(prog, arch, "clone", 0x3D0F00) == 0  # a thread (CLONE_VM|FS|FILES|SIGHAND|THREAD|...)
    assert _verdict(prog, arch, "clone", clone_vm | sigchld | (1 << 32)) == 0
    assert _verdict(prog, arch, "clone3") == errno.ENOSYS  # its flags are in memory: the C library falls back


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
def test_a_run_cannot_make_a_user_namespace_but_threads_and_processes_work(tmp_path: Path) -> None:
    """In a user namespace of its own a run would have every capability (root mode included)."""
    out = _python_run(tmp_path, '''
        import ctypes, subprocess, threading
        for cmd in (["unshare", "-U", "id", "-u"], ["unshare", "-Urm", "id", "-u"]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            print("USERNS" if r.returncode == 0 else "denied", r.stdout.strip(), r.stderr.strip())
        libc = ctypes.CDLL(None, use_errno=True)
        print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
        got = []
        threads = [threading.Thread(target=got.append, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("threads", len(got), "child", subprocess.run(["/bin/echo", "ok"], capture_output=True).stdout)
    ''')
    assert "USERNS" not in out and out.count("denied") == 2, out
    assert f"unshare -1 {errno.EPERM}" in out, out
    assert "threads 4 child b'ok\\n'" in out, out


# -- hidden paths ----------------------------------------------------------------------------
def test_every_hidden_path_a_run_would_see_is_masked_or_the_run_refused(tmp_path: Path) -> None:
    env = tmp_path / "env"
    (env / "lib" / "build").mkdir(parents=True)
    (env / "salt.key").write_text("salt")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    dirs, files = local.masks((env / "lib" / "build", env / "lib" / "build" / "inner", env / "salt.key", outside,
                               tmp_path / "missing-but-invisible"), [env])
    assert (dirs, files) == ([env / "lib" / "build"], [env / "salt.key"])  # inner: masked with its parent
    usr = Path("/usr")
    dirs, files = local.masks((usr / "bin" / "env",), [])
    assert files == [Path(os.path.realpath(usr / "bin" / "env"))]  # a file of the system directories
    # a directory holding the environment is not visible itself: only the environment is bound
    assert local.masks((tmp_path,), [env]) == ([], [])
    for bad, why in ((env, "holds"), (usr, "holds"), (usr / "share", "holds"),
                     (env / "lib" / "not-yet", "does not exist")):
        with pytest.raises(local.Unmaskable, match=why):
            local.masks((bad,), [env, usr / "share" / "env"])  # an environment inside a system directory
    cmd = bwrap.command(argv=["/x"], env={}, needs=[env], masks=dirs, work=Path("/w"), scratch_bytes=1, mode="root",
                        uid=65534, gid=65534, start_fd=None, timing="none", mask_files=[env / "salt.key"],
                        empty=Path("/run-dir/masked"))
    assert f"--ro-bind /run-dir/masked {env / 'salt.key'}" in " ".join(cmd)


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
@pytest.mark.skipif(not os.access("/usr/local/share", os.W_OK), reason="needs a writable /usr/local/share")
def test_hidden_files_and_directories_under_the_system_directories_are_invisible(tmp_path: Path) -> None:
    """A build directory or a salt file kept under /usr (bound into every run) stays hidden."""
    base = Path("/usr/local/share") / f"casekit-hide-test-{os.getpid()}"
    build, salt = base / "build", base / "salt.key"
    build.mkdir(parents=True)
    try:
        (build / "reference.npz").write_text("REFERENCE")
        salt.write_text("SALTVALUE")
        (base / "public.txt").write_text("public")
        script = f"cat {build}/reference.npz; ls -A {build}; cat {salt}; cat {base}/public.txt; echo end"
        spec = RunSpec(["/bin/sh", "-c", script], {}, {"PATH": "/usr/bin:/bin"}, Limits(timeout_sec=30, memory_mb=256),
                       timing="none", hide=(build, salt))
        r = local.LocalRunner().run(spec, tmp_path / "out")
        assert not r.setup_error and "end" in r.stdout, (r.setup_error, r.stderr)
        assert "REFERENCE" not in r.stdout and "reference.npz" not in r.stdout and "SALTVALUE" not in r.stdout, r.stdout
        assert "public" in r.stdout  # only what is hidden is masked
        refused = local.LocalRunner().run(RunSpec(["/bin/true"], {}, {"PATH": "/usr/bin:/bin"}, timing="none",
                                                  hide=(base / "not-yet-created",)), tmp_path / "out2")
        assert "does not exist" in refused.setup_error and refused.exit_code is None
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
@pytest.mark.parametrize("how", ["environment variable", "read"])
def test_a_salt_file_is_hidden_from_every_run_unasked(how: str, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    """A salt file where runs see the host's files (here: inside a bound environment) is masked
    although no caller puts it in ``hide``: named by $CASEKIT_SALT_FILE or read by casekit."""
    from casekit import ids

    env = tmp_path / "env"
    env.mkdir()
    salt, public = env / "salt.key", env / "public.txt"
    salt.write_text("SALTVALUE-" + "s" * 32)
    public.write_text("public")
    for p in (tmp_path, env):
        p.chmod(0o755)
    for p in (salt, public):
        p.chmod(0o644)
    monkeypatch.setattr(ids, "_READ", set())
    if how == "read":
        monkeypatch.delenv(ids.SALT_ENV, raising=False)
        assert ids.read_salt(salt)
    else:
        monkeypatch.setenv(ids.SALT_ENV, str(salt))
    spec = RunSpec(["/bin/sh", "-c", f"cat {salt}; cat {public}; echo end"], {}, {"PATH": "/usr/bin:/bin"},
                   Limits(timeout_sec=30, memory_mb=256), timing="none", needs=(env,))
    r = local.LocalRunner().run(spec, tmp_path / "out")
    assert not r.setup_error and "end" in r.stdout, (r.setup_error, r.stderr)
    assert "public" in r.stdout and "SALTVALUE" not in r.stdout, r.stdout


@pytest.mark.skipif(local.isolation_mode() == "unavailable", reason=local.unavailable_reason() or "")
def test_the_sandbox_init_command_line_names_no_host_path(tmp_path: Path) -> None:
    """/proc/1/cmdline (the sandbox's init, a fork of bubblewrap) is readable in a run: it shows
    the in-sandbox command only, not the binds, masks, run directory or bubblewrap's own path."""
    env = tmp_path / "env"
    (env / "hidden").mkdir(parents=True)
    for p in (tmp_path, env):
        p.chmod(0o755)
    spec = RunSpec(["/bin/sh", "-c", "tr '\\0' ' ' < /proc/1/cmdline"], {}, {"PATH": "/usr/bin:/bin"},
                   Limits(timeout_sec=30, memory_mb=256), timing="none", hide=(env / "hidden",), needs=(env,))
    r = local.LocalRunner().run(spec, tmp_path / "out")
    assert r.exit_code == 0 and r.stdout.startswith("bwrap --args "), (r.stdout, r.stderr, r.setup_error)
    for host in (bwrap.binary(), str(local.RUNS_ROOT), str(env), "/usr", "/etc"):
        assert host not in r.stdout, (host, r.stdout)


def test_casekit_is_masked_but_not_another_distributions_directories(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    """Installed from a wheel, casekit's data is inside the package; a 'templates' directory next to
    it in site-packages belongs to someone else and stays visible."""
    import casekit

    site_dir = tmp_path / "site-packages"
    (site_dir / "casekit").mkdir(parents=True)
    (site_dir / "templates").mkdir()
    monkeypatch.setattr(casekit, "__file__", str(site_dir / "casekit" / "__init__.py"))
    dirs, _ = local.masks((), [site_dir])
    assert site_dir / "casekit" in dirs and site_dir / "templates" not in dirs
    (tmp_path / "pyproject.toml").write_text("")  # a source checkout: its data directories are casekit's
    (tmp_path / "casekit").mkdir()
    (tmp_path / "templates").mkdir()
    monkeypatch.setattr(casekit, "__file__", str(tmp_path / "casekit" / "__init__.py"))
    dirs, _ = local.masks((), [tmp_path])
    assert {tmp_path / "casekit", tmp_path / "templates"} <= set(dirs)


def test_a_build_solve_is_bounded_by_cpu_time_and_says_so(tmp_path: Path) -> None:
    """A build's solves (casekit's own solvers) are limited by CPU time, which a busy machine does
    not stretch, with a wall-clock backstop: a solve that spins past its CPU budget is killed
    with a message that says so (not a bare signal number)."""
    from casekit.build.pipeline import WALL_BACKSTOP, BuildOptions
    from casekit.execution import crash_message

    limits = BuildOptions.solve_limits(1.2, 256)
    assert limits.cpu_sec == 2 and limits.timeout_sec == WALL_BACKSTOP * 2 and limits.memory_mb == 256
    # the kill itself, with a wall clock no loaded machine reaches first
    spec = RunSpec(["/bin/sh", "-c", "while :; do :; done"], {}, {"PATH": "/usr/bin:/bin"},
                   Limits(timeout_sec=600, cpu_sec=1, memory_mb=256), timing="wrapper")
    r = local.LocalRunner().run(spec, tmp_path / "out")
    assert not r.timed_out and r.exit_code is not None and r.exit_code > 128
    assert "CPU-time limit" in crash_message(r)
