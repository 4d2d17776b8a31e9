"""Container runners: the engine command lines (no engine is needed to build them), the
unavailable-engine error, and the harness's FIFO timing path they rely on."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
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


def _fake_engine(monkeypatch: pytest.MonkeyPatch, script: str) -> ContainerRunner:
    """A container runner whose 'engine' is ``sh -c script`` with the timing FIFO as $1 (no
    container engine exists here; the host side of the run is what is tested)."""
    monkeypatch.setattr(Engine, "command", lambda self, spec, image, work, fifo: ["sh", "-c", script, "engine",
                                                                                  str(fifo)])
    runner = ContainerRunner("docker")
    monkeypatch.setattr(runner, "available", lambda: (True, "fake"))
    return runner


def test_the_timed_region_does_not_spin_a_core(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """After the harness's start byte the FIFO reads EOF for ever: a loop that keeps it registered
    spins through the whole timed region."""
    runner = _fake_engine(monkeypatch, 'printf s > "$1"; sleep 1.5; echo done')
    cpu = time.thread_time()
    r = runner.run(_spec(), tmp_path / "out")
    cpu = time.thread_time() - cpu
    assert r.exit_code == 0 and not r.timed_out and r.stdout.strip() == "done"
    assert r.solve_seconds is not None and 1.4 < r.solve_seconds < 1.5 + 0.3, r.solve_seconds
    assert cpu < 0.3, f"the watch loop used {cpu:.2f} s of CPU in a 1.5 s run"


def test_a_chatty_run_neither_blocks_nor_loses_its_end(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Output is drained while the run goes on (a full pipe would block the engine until the
    timeout), and the end is seen when the engine's process exits."""
    runner = _fake_engine(monkeypatch, 'printf s > "$1"; head -c 2000000 /dev/zero | tr "\\0" x; echo; echo tail')
    r = runner.run(dataclasses.replace(_spec(), limits=dataclasses.replace(LIMITS, timeout_sec=15)), tmp_path / "out")
    assert r.exit_code == 0 and not r.timed_out, r
    assert r.stdout.endswith("tail\n") and r.solve_seconds is not None and r.solve_seconds < 10
