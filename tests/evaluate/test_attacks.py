"""Untrusted submissions are contained: each attack ends as an ordinary failing verdict, the
evaluator and the machine are unharmed, and nothing hidden is disclosed.

One test (at least) per class of the threat model (DESIGN.md section 6, README "Security"):
work outside the timed region, state kept between runs, reading what is hidden, regenerating the
hidden solution, hostile artifacts, resource exhaustion across runs, tampering with timing, and
the small ones (attempt numbering, markup in messages).
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import socket
import textwrap
import uuid
import zipfile
from pathlib import Path

import numpy as np
import pytest

from casekit.build.cheaters import cheater
from casekit.errors import UsageError
from casekit.evaluate.baselines import calibration_settings
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.tracks import TRACKS
from tests.helpers import record, write_submission

pytestmark = pytest.mark.dolfinx

ZEROS = textwrap.dedent('''
    def write_zeros(case_spec):
        import json
        import numpy as np
        g = case_spec["eval_grid"]
        x = np.linspace(g["bbox"][0], g["bbox"][1], g["nx"])
        y = np.linspace(g["bbox"][2], g["bbox"][3], g["ny"])
        np.savez("solution.npz", x=x, y=y, u=np.zeros((g["ny"], g["nx"])))
        with open("meta.json", "w") as fh:
            json.dump({"wall_time_sec": 0.0, "status": "ok"}, fh)
''')


def run_attack(tmp_path: Path, store, body: str, family: str = "poisson", repeats: int = 1,  # type: ignore[no-untyped-def]
               source: str | None = None, **opts) -> dict:
    rec = record(store, family)
    subs = tmp_path / f"subs-{uuid.uuid4().hex[:6]}"
    source = source or ZEROS + "\n\ndef solve(case_spec):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    write_submission(subs, rec["id"], source)
    opts.setdefault("timing", "build")
    verdicts = evaluate(EvalOptions(store, subs, tmp_path / f"out-{subs.name}", repeats=repeats, memory_mb=2048,
                                    **opts))
    return next(v for v in verdicts if v["case_id"] == rec["id"])


def calibrated(store, family: str, after: str) -> str:  # type: ignore[no-untyped-def]
    """The case's own calibration submission (self-contained), then ``after`` in solve."""
    rec = record(store, family)
    files = TRACKS.get("dolfinx").calibration_submission(calibration_settings(rec), rec["case_spec"])
    return (files["solver.py"].decode() + "\n\n_calibration_solve = solve\n\n\ndef solve(case_spec):\n"
            "    _calibration_solve(case_spec)\n" + textwrap.indent(textwrap.dedent(after), "    "))


def stdout_of(v: dict) -> str:
    p = v["paths"].get("stdout")
    return Path(p).read_text() if p else ""


def _host_processes_with(marker: str) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker.encode() in (d / "cmdline").read_bytes() or marker.encode() in (d / "environ").read_bytes():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


# -- reading what is hidden ---------------------------------------------------------------
def test_reading_the_reference_by_path_fails(tmp_path: Path, store, built: Path) -> None:
    rec = record(store, "poisson")
    ref = built / "build" / "dolfinx" / rec["id"] / "reference.npz"
    assert ref.exists()
    v = run_attack(tmp_path, store, f'''
        import shutil
        try:
            shutil.copy({str(ref)!r}, "solution.npz")
            print("LEAKED reference")
        except OSError as exc:
            print("blocked", exc)
        import json
        json.dump({{"wall_time_sec": 0.0, "status": "ok"}}, open("meta.json", "w"))
    ''')
    assert v["stage"] == "F-Exec" and "LEAKED" not in stdout_of(v)


def test_scanning_the_file_system_finds_no_evaluator_data_nor_casekit(tmp_path: Path, store, built: Path) -> None:
    # the track's environment is visible by design, wherever it lives (casekit keeps track
    # environments under ~/.cache/casekit/envs): inside it, nothing of casekit may be
    env = str(TRACKS.get("dolfinx").python().parent.parent)
    v = run_attack(tmp_path, store, f'''
        import os
        hits = []
        for root, dirs, files in os.walk("/"):
            if root.startswith(("/proc", "/sys", "/dev", "/usr", "/run/casekit/work")) or ".dist-info" in root:
                dirs[:] = []
                continue
            inside = root.removeprefix({env!r})
            for f in files:
                if f in ("reference.npz", "calibration.npz", "records.jsonl", "cases.jsonl", "record.json",
                         "derive.py") or ("casekit" in inside and f.endswith((".py", ".yaml", ".json"))):
                    hits.append(os.path.join(root, f))
        print("HITS", hits)
        write_zeros(case_spec)
    ''')
    out = stdout_of(v)
    assert "HITS []" in out, out[:2000]
    assert v["stage"] == "F-Acc"


def test_other_cases_submissions_and_outputs_are_invisible(tmp_path: Path, store) -> None:
    other = record(store, "heat")
    secret = tmp_path / "other" / other["id"] / "solver.py"
    secret.parent.mkdir(parents=True)
    secret.write_text("SECRET = 1\n")
    v = run_attack(tmp_path, store, f'''
        import os
        print("SEE" if os.path.exists({str(secret)!r}) else "hidden")
        write_zeros(case_spec)
    ''')
    assert "hidden" in stdout_of(v) and "SEE" not in stdout_of(v)


def test_symlinks_out_of_the_directory_are_not_followed(tmp_path: Path, store, built: Path) -> None:
    rec = record(store, "poisson")
    ref = built / "build" / "dolfinx" / rec["id"] / "reference.npz"
    v = run_attack(tmp_path, store, f'''
        import os
        os.symlink({str(ref)!r}, "solution.npz")
        os.symlink("/etc/passwd", "meta.json")
        os.mkfifo("extra.fifo")
    ''')
    assert v["stage"] == "F-Exec" and v["failure"]["category"] == "missing_artifact"


# -- regenerating the hidden solution -----------------------------------------------------
def test_casekit_and_the_case_identity_are_out_of_reach(tmp_path: Path, store) -> None:
    rec = record(store, "poisson")
    v = run_attack(tmp_path, store, '''
        import json, sys
        for mod in ("casekit.derive", "casekit.authoring.builder", "casekit.validate", "casekit.families"):
            try:
                __import__(mod)
                print("IMPORTED", mod)
            except ImportError:
                pass
        print("SPEC", json.dumps(case_spec))
        write_zeros(case_spec)
    ''')
    out = stdout_of(v)
    assert "IMPORTED" not in out, out
    spec_text = out.split("SPEC", 1)[1]
    assert rec["id"] not in spec_text and "manufactured" not in spec_text
    assert rec["public_id"].startswith("case-") and rec["pde_classification"]["equation_family"] not in rec["public_id"]


# -- work outside the timed region ---------------------------------------------------------
def test_processes_that_outlive_the_harness_die_before_outputs_are_read(tmp_path: Path, store) -> None:
    marker = f"casekit-daemon-{uuid.uuid4().hex}"
    v = run_attack(tmp_path, store, f'''
        import fcntl, os, sys, time
        write_zeros(case_spec)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                sys.argv[0] = {marker!r}
                os.environ["MARKER"] = {marker!r}
                fd = os.open("solution.npz", os.O_RDONLY)
                try:
                    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)  # hold up the copy
                except OSError:
                    pass
                time.sleep(3)
                open("late.txt", "w").write("computed after the harness")
                import numpy as np
                d = dict(np.load("solution.npz"))
                d["u"] = d["u"] + 1.0
                np.savez("solution.npz", **d)
            os._exit(0)
        os.wait()
    ''')
    assert v["stage"] == "F-Acc" and v["error"] == pytest.approx(1.0)  # the harness's own zeros
    assert not (Path(v["paths"]["solution"]).parent / "late.txt").exists()
    assert v["runtime"]["median"] < 2.5  # the run ended when the harness did: the daemon was killed
    assert _host_processes_with(marker) == []


def test_no_capabilities_no_way_out_and_no_timing_channel(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        import ctypes, os, subprocess, time
        status = open("/proc/self/status").read()
        print("UID", os.getuid(), "CAPS", status.split("CapEff:")[1].split()[0])
        for cmd in (["umount", "-l", "/run/casekit/work"], ["umount", "-l", "/"], ["mount", "-t", "tmpfs", "x", "/tmp"],
                    ["unshare", "-Urm", "sh", "-c", "umount -l /usr && ls /"]):
            r = subprocess.run(cmd, capture_output=True)
            print("CMD", cmd[0], r.returncode)
        wrote = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    with open(f"/proc/{pid}/fd/{fd}", "wb", buffering=0) as fh:
                        fh.write(b"e")
                        wrote += 1
                except OSError:
                    pass
        time.sleep(2.0)
        write_zeros(case_spec)
    ''')
    out = stdout_of(v)
    assert "UID 65534 CAPS 0000000000000000" in out, out
    assert "CMD umount 0" not in out and "CMD mount 0" not in out
    assert "CMD unshare" in out and "CMD unshare 0" not in out, out  # no user namespace, in any mode
    assert v["stage"] == "F-Acc"
    assert v["runtime"]["median"] >= 2.0  # no byte written anywhere ended the timed region early


def test_a_forged_meta_runtime_does_not_change_the_measured_time(tmp_path: Path, store) -> None:
    rec = record(store, "poisson")
    delay = rec["evaluation_metadata"]["thresholds"]["tau_time"] + 0.5
    v = run_attack(tmp_path, store, "", source=calibrated(store, "poisson", f'''
        import json, time
        time.sleep({delay})
        json.dump({{"wall_time_sec": 1e-6, "status": "ok"}}, open("meta.json", "w"))
    '''))
    assert v["stage"] == "F-Time", v
    assert v["runtime"]["median"] > delay


# -- state between runs -----------------------------------------------------------------
def test_no_state_survives_from_one_run_to_the_next(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        import os
        places = [os.path.expanduser("~/.casekit-cache"), "/tmp/cache", "/var/tmp/cache", "/dev/shm/cache",
                  "cache.npz", os.path.expanduser("~/.petscrc"), os.path.expanduser("~/.cache/fenics/cached")]
        seen = [p for p in places if os.path.exists(p)]
        print("SEEN" if seen else "FRESH", seen)
        for p in places:
            os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
            with open(p, "w") as fh:
                fh.write("-dll_append /nonexistent/libcheat.so\\n")
        write_zeros(case_spec)
    ''', repeats=3)
    assert v["stage"] == "F-Acc" and len(v["errors"]) == 3
    out = stdout_of(v)
    assert "FRESH" in out and "SEEN" not in out


def test_kernel_state_that_outlives_processes_is_out_of_reach(tmp_path: Path, store) -> None:
    """The keyrings (per uid, outliving every process) and page-cache eviction and queries
    (fadvise, reads that must not wait for the disk: RWF_NOWAIT, Linux AIO) are denied, and the
    host's cgroup tree is not shown."""
    v = run_attack(tmp_path, store, '''
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        desc = b"casekit-answer"
        found = libc.syscall(250, 10, -4, b"user", desc, 0)  # KEYCTL_SEARCH in the user keyring
        print("FOUND" if found >= 0 else "NOTFOUND")
        added = libc.syscall(248, b"user", desc, b"0123456789", 10, -4)  # add_key
        print("ADDED" if added >= 0 else "DENIED", os.strerror(ctypes.get_errno()))
        fd = os.open("/usr/bin/env", os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            print("EVICTED")
        except OSError as exc:
            print("fadvise", exc.errno)
        try:
            os.preadv(fd, [bytearray(4096)], 0, os.RWF_NOWAIT)  # EAGAIN when the page is not cached
            print("RESIDENCY READ")
        except OSError as exc:
            print("nowait", exc.errno)
        print("plain read", len(os.pread(fd, 4096, 0)))
        print("CGROUPS", os.listdir("/sys/fs/cgroup"))
        write_zeros(case_spec)
    ''', repeats=2)
    out = stdout_of(v)
    assert "NOTFOUND" in out and "DENIED Operation not permitted" in out and "ADDED" not in out, out
    assert "fadvise 1" in out and "EVICTED" not in out and "CGROUPS []" in out
    assert f"nowait {errno.EOPNOTSUPP}" in out and "RESIDENCY READ" not in out and "plain read 4096" in out, out


def test_text_that_is_not_unicode_never_stops_the_evaluation(tmp_path: Path, store) -> None:
    """A lone surrogate in a file name, a meta.json key or solver_info ends in a verdict, and the
    other systems' verdicts of the batch are written."""
    rec = record(store, "poisson")
    bad = tmp_path / "surrogates"
    write_submission(bad, rec["id"], ZEROS + textwrap.dedent('''
        def solve(case_spec):
            import os
            write_zeros(case_spec)
            os.close(os.open(b"\\xff\\xfe-name", os.O_CREAT | os.O_WRONLY))
            open("meta.json", "w").write('{"wall_time_sec": 1, "status": "ok", "\\\\ud800": 1, '
                                         '"solver_info": {"\\\\udcff": 1}}')
    '''))
    good = tmp_path / "zeros"
    write_submission(good, rec["id"], cheater("zero")["solver.py"].decode())
    verdicts = evaluate(EvalOptions(store, [bad, good], tmp_path / "out", repeats=1, timing="build"))
    by = {(v["system"], v["case_id"]): v for v in verdicts}
    assert by[("surrogates", rec["id"])]["stage"] == "F-Exec"
    assert by[("zeros", rec["id"])]["stage"] == "F-Acc"
    text = (tmp_path / "out" / "verdicts.jsonl").read_bytes()
    text.decode("utf-8")  # valid UTF-8 throughout
    assert len(text.splitlines()) == len(verdicts)


def test_a_cached_answer_cannot_buy_runtime(tmp_path: Path, store) -> None:
    """The cached attack: solve in one run, save the answer, load it fast in the next ones."""
    rec = record(store, "poisson")
    delay = rec["evaluation_metadata"]["thresholds"]["tau_time"] + 0.5
    source = calibrated(store, "poisson", f'''
        import os, shutil, time
        cache = os.path.expanduser("~/answer.npz")
        if os.path.exists(cache):
            print("CACHE HIT")
        else:
            shutil.copy("solution.npz", cache)
            time.sleep({delay})
    ''')
    v = run_attack(tmp_path, store, "", source=source, repeats=3)
    assert v["stage"] == "F-Time" and "CACHE HIT" not in stdout_of(v)
    assert min(v["runtime"]["runs"]) > delay


# -- hostile artifacts --------------------------------------------------------------------
def _npz(arrays: dict[str, object]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def test_hostile_artifacts_become_that_attempts_failure_and_keep_the_batch(tmp_path: Path, store) -> None:
    rec = record(store, "poisson")
    heat = record(store, "heat")
    g = rec["case_spec"]["eval_grid"]
    x, y = np.linspace(g["bbox"][0], g["bbox"][1], g["nx"]), np.linspace(g["bbox"][2], g["bbox"][3], g["ny"])
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x.npy", _npy(x))
        zf.writestr("y.npy", _npy(y))
        with zf.open("u.npy", "w", force_zip64=True) as fh:  # the right header, then 256 MiB of zeros
            fh.write(_npy(np.zeros((g["ny"], g["nx"])))[:128])
            block = b"\0" * (1 << 20)
            for _ in range(256):
                fh.write(block)
    artifacts = {
        "bomb": bomb.read_bytes(),
        "strings": _npz({"x": x.astype(str), "y": y.astype(str), "u": np.zeros((g["ny"], g["nx"])).astype(str)}),
        "objects": _npz({"x": x, "y": y, "u": np.array([{"a": 1}] * (g["nx"] * g["ny"]), dtype=object)
                         .reshape(g["ny"], g["nx"])}),
        "notzip": b"PK\x03\x04" + os.urandom(4000),
        "shape": _npz({"x": x, "y": y, "u": np.zeros((10**4, 10**3))[:1]}),
    }
    metas = {"deep": "[" * 50000 + "]" * 50000, "huge_int": '{"wall_time_sec": 1' + "0" * 5000 + ', "status": "ok"}',
             "nan": '{"wall_time_sec": NaN, "status": "ok", "solver_info": {"dofs": 1e999}}'}
    subs = tmp_path / "hostile"
    cases = [*artifacts, *(f"meta_{k}" for k in metas)]
    # one submission per hostile artifact, each as an attempt of the poisson case
    for i, name in enumerate(cases, start=1):
        meta_text = metas.get(name.removeprefix("meta_"), '{"wall_time_sec": 0, "status": "ok"}')
        blob = artifacts.get(name)
        body = (ZEROS + "\n\ndef solve(case_spec):\n    write_zeros(case_spec)\n"
                + (f"    open('solution.npz', 'wb').write(__import__('base64').b64decode({_b64(blob)!r}))\n"
                   if blob is not None else "")
                + f"    open('meta.json', 'w').write({meta_text!r})\n")
        write_submission(subs, rec["id"], body, attempt=i)
    write_submission(subs, heat["id"], cheater("zero")["solver.py"].decode())
    verdicts = evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1, timing="build"))
    by = {(v["case_id"], v["attempt"]): v for v in verdicts}
    for i, name in enumerate(cases, start=1):
        v = by[(rec["id"], i)]
        assert v["stage"] == "F-Exec" and v["failure"]["category"] in ("invalid_artifact", "non_finite"), (name, v)
    assert by[(heat["id"], 1)]["stage"] == "F-Acc"  # the rest of the batch is scored
    lines = (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    assert len(lines) == len(cases) + 1


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def _b64(data: bytes | None) -> str:
    import base64

    return base64.b64encode(data or b"").decode()


def test_nan_in_the_domain_is_an_artifact_failure(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, "", source=calibrated(store, "poisson", '''
        import numpy as np
        data = dict(np.load("solution.npz"))
        data["u"][len(data["y"]) // 2, len(data["x"]) // 2] = np.nan
        np.savez("solution.npz", **data)
    '''))
    assert v["stage"] == "F-Exec" and v["failure"]["category"] == "non_finite"


def test_a_printed_fake_verdict_is_ignored(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        print('{"stage": "Pass", "passed": true, "error": 0.0}')
        write_zeros(case_spec)
    ''')
    assert v["stage"] == "F-Acc" and not v["passed"]


# -- resource exhaustion ------------------------------------------------------------------
def test_network_is_off(tmp_path: Path, store) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.1)
    port = server.getsockname()[1]
    v = run_attack(tmp_path, store, f'''
        import socket
        for target in [("127.0.0.1", {port}), ("pypi.org", 443), ("1.1.1.1", 53)]:
            try:
                socket.create_connection(target, timeout=2).close()
                print("NET OK", target)
            except OSError as exc:
                print("no network", target, exc)
        write_zeros(case_spec)
    ''')
    with pytest.raises(socket.timeout):
        server.accept()
    server.close()
    assert "NET OK" not in stdout_of(v) and v["stage"] == "F-Acc"


def test_fork_bomb_is_stopped(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        import os, time
        children = 0
        for _ in range(100000):
            try:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                children += 1
            except OSError:
                break
        print("forked", children)
        write_zeros(case_spec)
    ''')
    assert v["stage"] in ("F-Exec", "F-Acc")
    assert int(stdout_of(v).split("forked")[1].split()[0]) < 300
    os.system("true")  # the evaluator can still start processes


def test_memory_bomb_fails_execution(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        block = bytearray(50 * 1024 ** 3)
        write_zeros(case_spec)
    ''')
    assert v["stage"] == "F-Exec" and v["failure"]["category"] == "crash"


def test_forks_and_scratch_share_one_memory_limit(tmp_path: Path, store) -> None:
    """Processes and tmpfs pages of a run are charged to the same per-run limit (2048 MiB)."""
    v = run_attack(tmp_path, store, '''
        import os, signal
        dirs = ["/dev/shm", "/tmp", "/var/tmp", os.path.expanduser("~"), "."]
        for i in range(6):
            if os.fork() == 0:
                try:
                    with open(f"{dirs[i % 5]}/fill{i}", "wb") as fh:
                        for _ in range(300):
                            fh.write(b"x" * (1 << 20))
                    block = bytearray(300 * 1024 ** 2)
                    import time
                    time.sleep(3)
                finally:
                    os._exit(0)
        killed = 0
        for _ in range(6):
            _, status = os.wait()
            killed += os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        print("KILLED", killed)
        for i in range(6):
            try:
                os.unlink(f"{dirs[i % 5]}/fill{i}")
            except OSError:
                pass
        write_zeros(case_spec)
    ''')
    # 6 x (300 MiB of tmpfs + 300 MiB of heap) cannot fit in the run's 2048 MiB: the kernel kills
    # (the kernel picks its victims: the children, or the parent -- then the run is out of memory)
    out = stdout_of(v)
    if "KILLED" in out:
        assert int(out.split("KILLED")[1].split()[0]) >= 3, out
    else:
        assert v["stage"] == "F-Exec" and "out of memory" in v["failure"]["message"], v["failure"]
    assert any(n.startswith("peak memory") and int(n.split()[2]) <= 2048 for n in v["sandbox_notes"]), v


def test_cpu_spin_past_the_timeout(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        while True:
            pass
    ''')
    assert v["stage"] == "F-Exec" and v["failure"]["category"] == "timeout"


def test_filling_the_disk_is_bounded(tmp_path: Path, store) -> None:
    before = shutil.disk_usage("/").free
    v = run_attack(tmp_path, store, '''
        try:
            with open("fill.bin", "wb") as fh:
                for _ in range(20000):
                    fh.write(b"x" * (1 << 20))
        except OSError as exc:
            print("stopped", exc)
        write_zeros(case_spec)
    ''')
    assert v["stage"] in ("F-Acc", "F-Exec")
    assert shutil.disk_usage("/").free > before - 200 * (1 << 20)


def test_process_limits_are_per_run_not_per_user(tmp_path: Path, store) -> None:
    """Two runs at once, both as uid 65534, each may start ~200 processes (limit 256 per run)."""
    rec, heat = record(store, "poisson"), record(store, "heat")
    body = ZEROS + textwrap.dedent('''
        def solve(case_spec):
            import os, time
            pids = []
            for _ in range(200):
                pid = os.fork()
                if pid == 0:
                    time.sleep(4)
                    os._exit(0)
                pids.append(pid)
            print("FORKED", len(pids))
            for p in pids:
                os.waitpid(p, 0)
            write_zeros(case_spec)
    ''')
    subs = tmp_path / "forkers"
    write_submission(subs, rec["id"], body)
    write_submission(subs, heat["id"], body)
    verdicts = evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1, jobs=2, timing="build"))
    for v in verdicts:
        assert v["stage"] == "F-Acc" and "FORKED 200" in stdout_of(v), v["failure"]


def test_writing_outside_its_directory_touches_nothing(tmp_path: Path, store) -> None:
    targets = ["/tmp/casekit-attack-out", "/work/casekit-attack-out", "/root/casekit-attack-out",
               "/etc/casekit-attack-out", str(tmp_path / "casekit-attack-out")]
    v = run_attack(tmp_path, store, f'''
        for t in {targets!r}:
            try:
                open(t, "w").write("owned")
                print("wrote", t)
            except OSError:
                pass
        write_zeros(case_spec)
    ''')
    assert v["stage"] == "F-Acc"
    for t in targets:
        assert not os.path.exists(t), t


def test_killing_or_signalling_the_evaluator_fails(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        import os, signal
        for pid in list(range(1, 400)) + [os.getppid()]:
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except (PermissionError, ProcessLookupError):
                pass
        write_zeros(case_spec)
    ''')
    assert v["stage"] in ("F-Acc", "F-Exec")  # and this test process is alive to check it


def test_the_environment_is_scrubbed(tmp_path: Path, store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASEKIT_TEST_SECRET", "hunter2")
    v = run_attack(tmp_path, store, '''
        import os
        print("SECRET" if "hunter2" in str(os.environ) else "clean")
        write_zeros(case_spec)
    ''')
    assert "clean" in stdout_of(v)


# -- small ones ---------------------------------------------------------------------------
def test_a_hostile_layout_fails_its_own_case_and_nothing_else(tmp_path: Path, store) -> None:
    """attempt_1 beside attempt_01, a case directory that links to another system's, a solver
    that links out, attempt numbers past the cap, a stray directory: each fails (or is ignored
    for) that case only; the other systems' and cases' verdicts are given."""
    poisson, heat = record(store, "poisson"), record(store, "heat")
    honest, dup, linked, hard, many = (tmp_path / n for n in ("honest", "dup", "linked", "link_file", "many"))
    write_submission(honest, poisson["id"], "x = 1\n")
    write_submission(honest, heat["id"], "x = 1\n")
    write_submission(dup, poisson["id"], "x = 1\n", attempt=1)
    (dup / poisson["id"] / "attempt_01").mkdir()
    (dup / poisson["id"] / "attempt_01" / "solver.py").write_text("x = 2\n")
    write_submission(dup, heat["id"], "x = 1\n")
    linked.mkdir()
    (linked / poisson["id"]).symlink_to(honest / poisson["id"], target_is_directory=True)
    (linked / "not-a-case").mkdir()
    (hard / poisson["id"]).mkdir(parents=True)
    (hard / poisson["id"] / "solver.py").symlink_to(honest / heat["id"] / "solver.py")
    (many / poisson["id"] / "attempt_101").mkdir(parents=True)
    warnings: list[str] = []
    verdicts = evaluate(EvalOptions(store, [honest, dup, linked, hard, many], tmp_path / "out", repeats=1),
                        warn=warnings.append)
    by = {(v["system"], v["case_id"]): v for v in verdicts}
    assert "both attempt 1" in by["dup", poisson["id"]]["failure"]["message"]
    assert by["dup", heat["id"]]["failure"]["category"] == "crash"  # ran (x = 1 defines no solve)
    assert "symbolic link" in by["linked", poisson["id"]]["failure"]["message"]
    assert "symbolic link" in by["link_file", poisson["id"]]["failure"]["message"]
    assert "numbered from 1 to 100" in by["many", poisson["id"]]["failure"]["message"]
    assert all(by[s, poisson["id"]]["failure"]["category"] == "invalid_submission"
               for s in ("dup", "linked", "link_file", "many"))
    assert by["honest", poisson["id"]]["failure"]["category"] == "crash"
    assert any("not-a-case" in w for w in warnings)


def test_two_systems_of_the_same_name_are_refused(tmp_path: Path, store) -> None:
    rec = record(store, "poisson")
    a, b = tmp_path / "a" / "agent", tmp_path / "b" / "agent"
    write_submission(a, rec["id"], "x = 1\n")
    write_submission(b, rec["id"], "x = 1\n")
    with pytest.raises(UsageError, match="both named"):
        evaluate(EvalOptions(store, [a, b], tmp_path / "out", repeats=1))


def test_markup_in_messages_does_not_crash_the_cli(tmp_path: Path, store, built: Path) -> None:
    from typer.testing import CliRunner

    from casekit.cli import app

    rec = record(store, "poisson")
    subs = tmp_path / "markup"
    write_submission(subs, rec["id"], "def solve(case_spec):\n    raise RuntimeError('[/bold] [red]x[/] [link=y]')\n")
    result = CliRunner().invoke(app, ["evaluate", "--cases", str(built / "build"), "--submissions", str(subs),
                                      "--out", str(tmp_path / "o"), "--repeats", "1", "--timing", "build"])
    assert result.exit_code == 0, result.output
    assert "F-Exec" in result.output
    assert json.loads((tmp_path / "o" / "verdicts.jsonl").read_text().splitlines()[-1])["case_id"]


@pytest.mark.parametrize("kind", ["dirichlet_first", "dirichlet_nearest", "initial", "zero"])
def test_boundary_and_initial_data_everywhere_fail_accuracy(tmp_path: Path, store, kind: str) -> None:
    for rec in store.records.values():
        if kind == "initial" and "ic" not in rec["case_spec"]:
            continue
        write_submission(tmp_path / kind, rec["id"], cheater(kind)["solver.py"].decode())
    verdicts = evaluate(EvalOptions(store, tmp_path / kind, tmp_path / f"out-{kind}", repeats=1, timing="build"))
    scored = [v for v in verdicts if v["failure"]["category"] != "missing_submission"]
    assert scored and all(v["stage"] == "F-Acc" for v in scored), [(v["case_id"], v["error"]) for v in scored]
