"""Container runners: the engine command lines (no engine is needed to build them), the
unavailable-engine error, and the harness's FIFO timing path they rely on."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from casekit.errors import CasekitError
from casekit.runner.base import RUNNERS, RunSpec
from casekit.runner.kinds.container import TIMING, USER, WORK, ContainerRunner, Engine
from casekit.runner.limits import Limits

LIMITS = Limits(timeout_sec=60, memory_mb=2048, file_mb=64, disk_mb=256, nproc=64, nofile=128)


def _spec(timing: str = "harness", command: list[str] | None = None) -> RunSpec:
    return RunSpec(command or [sys.executable, "harness.py"], {"solver.py": b""},
                   {"PATH": "/host/bin", "OMP_NUM_THREADS": "1"}, LIMITS, timing, (), (), "casekit/dolfinx:0.11")


@pytest.mark.parametrize("engine", ["docker", "podman"])
def test_docker_like_commands_isolate_the_run(engine: str) -> None:
    cmd = Engine(engine).command(_spec(), "casekit/dolfinx:0.11", Path("/w"), Path("/f"))
    joined = " ".join(cmd)
    assert cmd[:3] == [engine, "run", "--rm"]
    for flag in ("--network none", f"--user {USER}", "--read-only", "--cap-drop ALL", "--memory 2048m",
                 "--memory-swap 2048m", "--pids-limit 64", f"--ulimit fsize={64 * 1024 * 1024}",
                 "--ulimit nofile=128", f"--volume /w:{WORK}:rw", f"--volume /f:{TIMING}:rw", f"--workdir {WORK}",
                 "--tmpfs /tmp:rw,size=256m"):
        assert flag in joined, flag
    # the host interpreter path means nothing in the image; the host PATH is not passed
    assert cmd[-3:] == ["casekit/dolfinx:0.11", "python3", "harness.py"]
    assert "PATH=/host/bin" not in joined and "OMP_NUM_THREADS=1" in joined
    assert f"CASEKIT_TIMING_PATH={TIMING}" in joined


def test_compiled_programs_get_the_in_container_start_signal() -> None:
    cmd = Engine("docker").command(_spec("wrapper", ["bash", "-c", "exec ./solver"]), "img", Path("/w"), Path("/f"))
    i = cmd.index("img")
    assert cmd[i + 1:i + 3] == ["sh", "-c"] and f"> {TIMING}" in cmd[i + 3]
    assert cmd[-3:] == ["bash", "-c", "exec ./solver"]
    assert "CASEKIT_TIMING_PATH" not in " ".join(cmd)


def test_apptainer_contains_the_run_and_applies_limits_with_prlimit() -> None:
    cmd = Engine("apptainer").command(_spec(), "casekit/dealii:9.4", Path("/w"), Path("/f"))
    joined = " ".join(cmd)
    for flag in ("--containall", "--cleanenv", "--network none", f"--bind /w:{WORK}", f"--pwd {WORK}",
                 "docker://casekit/dealii:9.4", f"--as={2048 * 1024 * 1024}", "--nofile=128"):
        assert flag in joined, flag
    assert cmd[-2:] == ["python3", "harness.py"]


def test_every_engine_is_registered_and_an_absent_one_is_a_clear_error(monkeypatch, tmp_path: Path) -> None:
    assert {"docker", "podman", "apptainer", "local"} <= set(RUNNERS.names())
    monkeypatch.setenv("PATH", str(tmp_path))  # no engine on PATH
    runner = ContainerRunner("docker")
    ok, why = runner.available()
    assert not ok and "not installed" in why
    with pytest.raises(CasekitError) as err:
        runner.run(_spec(), tmp_path / "out")
    assert "docker" in err.value.message and err.value.valid == "local"


def test_the_harness_signals_the_start_through_the_timing_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "timing"
    os.mkfifo(fifo)
    harness = Path(__file__).resolve().parents[2] / "casekit" / "runner" / "harness_python.py"
    (tmp_path / "harness.py").write_bytes(harness.read_bytes())
    (tmp_path / "case_spec.json").write_text("{}")
    (tmp_path / "solver.py").write_text("def solve(case_spec):\n    open('done', 'w').write('ok')\n")
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = subprocess.run([sys.executable, "harness.py"], cwd=tmp_path, env={"CASEKIT_TIMING_PATH": str(fifo)},
                       capture_output=True, timeout=60)
    reader.join(timeout=10)
    assert r.returncode == 0, r.stderr
    assert got == [b"s"] and (tmp_path / "done").read_text() == "ok"
