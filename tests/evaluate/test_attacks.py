"""Untrusted submissions are contained: each attack ends as F-Exec or an ordinary failing verdict,
the evaluator and the machine are unharmed, and nothing hidden is disclosed."""

from __future__ import annotations

import os
import shutil
import socket
import textwrap
from pathlib import Path

import pytest

from casekit.build.cheaters import cheater
from casekit.evaluate.run import EvalOptions, evaluate
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


def run_attack(tmp_path: Path, store, body: str, family: str = "poisson") -> dict:  # type: ignore[no-untyped-def]
    rec = record(store, family)
    subs = tmp_path / "subs"
    source = ZEROS + "\n\ndef solve(case_spec):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    write_submission(subs, rec["id"], source)
    verdicts = evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1, memory_mb=2048))
    return next(v for v in verdicts if v["case_id"] == rec["id"])


def stdout_of(v: dict) -> str:
    p = v["paths"].get("stdout")
    return Path(p).read_text() if p else ""


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


def test_scanning_the_file_system_finds_no_evaluator_data(tmp_path: Path, store, built: Path) -> None:
    v = run_attack(tmp_path, store, '''
        import os
        hits = []
        for top in ("/", ):
            for root, dirs, files in os.walk(top):
                if root.startswith(("/proc", "/sys", "/dev")):
                    dirs[:] = []
                    continue
                for f in files:
                    if f in ("reference.npz", "calibration.npz", "records.jsonl", "cases.jsonl", "record.json") \\
                            or (f.endswith(".yaml") and "cases" in root):
                        hits.append(os.path.join(root, f))
        print("HITS", hits)
        write_zeros(case_spec)
    ''')
    out = stdout_of(v)
    assert "HITS []" in out, out[:2000]
    assert v["stage"] == "F-Acc"


def test_other_cases_submissions_and_outputs_are_invisible(tmp_path: Path, store) -> None:
    other = record(store, "heat")
    secret = tmp_path / "subs" / other["id"] / "solver.py"
    secret.parent.mkdir(parents=True)
    secret.write_text("SECRET = 1\n")
    v = run_attack(tmp_path, store, f'''
        import os
        print("SEE" if os.path.exists({str(secret)!r}) else "hidden")
        write_zeros(case_spec)
    ''')
    assert "hidden" in stdout_of(v) and "SEE" not in stdout_of(v)


def test_no_network(tmp_path: Path, store) -> None:
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
    assert int(stdout_of(v).split("forked")[1].split()[0]) < 1000
    os.system("true")  # the evaluator can still start processes


def test_memory_bomb_fails_execution(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        block = bytearray(50 * 1024 ** 3)
        write_zeros(case_spec)
    ''')
    assert v["stage"] == "F-Exec" and v["failure"]["category"] == "crash"


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


def test_symlinks_out_of_the_directory_are_not_followed(tmp_path: Path, store, built: Path) -> None:
    rec = record(store, "poisson")
    ref = built / "build" / "dolfinx" / rec["id"] / "reference.npz"
    v = run_attack(tmp_path, store, f'''
        import os
        os.symlink({str(ref)!r}, "solution.npz")
        os.symlink("/etc/passwd", "meta.json")
    ''')
    assert v["stage"] == "F-Exec" and v["failure"]["category"] == "missing_artifact"


def test_killing_or_signalling_the_evaluator_fails(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        import os, signal
        denied = 0
        for pid in list(range(1, 400)) + [os.getppid()]:
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except (PermissionError, ProcessLookupError):
                denied += 1
        print("denied", denied)
        write_zeros(case_spec)
    ''')
    assert v["stage"] in ("F-Acc", "F-Exec")  # and this test process is alive to check it


def test_a_printed_fake_verdict_is_ignored(tmp_path: Path, store) -> None:
    v = run_attack(tmp_path, store, '''
        print('{"stage": "Pass", "passed": true, "error": 0.0}')
        write_zeros(case_spec)
    ''')
    assert v["stage"] == "F-Acc" and not v["passed"]


def test_a_forged_meta_runtime_does_not_change_the_measured_time(tmp_path: Path, store) -> None:
    from casekit.evaluate.baselines import calibration_settings

    rec = record(store, "poisson")
    settings = calibration_settings(rec)
    delay = rec["evaluation_metadata"]["thresholds"]["tau_time"] + 0.5
    v = run_attack(tmp_path, store, f'''
        import json, time
        from casekit.solvers.dolfinx import solve as _solve
        _solve(case_spec, {settings!r})
        time.sleep({delay})
        json.dump({{"wall_time_sec": 1e-6, "status": "ok"}}, open("meta.json", "w"))
    ''')
    assert v["stage"] == "F-Time", v
    assert v["runtime"]["median"] > delay


def test_nan_in_the_domain_is_an_artifact_failure(tmp_path: Path, store) -> None:
    from casekit.evaluate.baselines import calibration_settings

    settings = calibration_settings(record(store, "poisson"))
    v = run_attack(tmp_path, store, f'''
        import numpy as np
        from casekit.solvers.dolfinx import solve as _solve
        _solve(case_spec, {settings!r})
        data = dict(np.load("solution.npz"))
        data["u"][len(data["y"]) // 2, len(data["x"]) // 2] = np.nan
        np.savez("solution.npz", **data)
    ''')
    assert v["stage"] == "F-Exec" and v["failure"]["category"] == "non_finite"


def test_the_environment_is_scrubbed(tmp_path: Path, store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASEKIT_TEST_SECRET", "hunter2")
    v = run_attack(tmp_path, store, '''
        import os
        print("ENV", sorted(os.environ))
        print("SECRET" if "hunter2" in str(os.environ) else "clean")
        write_zeros(case_spec)
    ''')
    assert "clean" in stdout_of(v)


@pytest.mark.parametrize("kind", ["dirichlet_first", "dirichlet_nearest", "initial", "zero"])
def test_boundary_and_initial_data_everywhere_fail_accuracy(tmp_path: Path, store, kind: str) -> None:
    for rec in store.records.values():
        if kind == "initial" and "ic" not in rec["case_spec"]:
            continue
        subs = tmp_path / kind
        write_submission(subs, rec["id"], cheater(kind)["solver.py"].decode())
    verdicts = evaluate(EvalOptions(store, tmp_path / kind, tmp_path / f"out-{kind}", repeats=1))
    assert verdicts and all(v["stage"] == "F-Acc" for v in verdicts), [(v["case_id"], v["error"]) for v in verdicts]
