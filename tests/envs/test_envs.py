"""Track environments: resumable steps, recipe hashes, the check command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit.cli import app
from casekit.envs import ENVIRONMENTS, Environment, EnvStatus, Step, run_steps
from casekit.errors import CasekitError


def _steps(out: Path, fail_at: str | None = None) -> list[Step]:
    def cmd(name: str) -> tuple[str, ...]:
        return (f"echo {name} >> {out}", "false") if name == fail_at else (f"echo {name} >> {out}",)
    return [Step(n, cmd(n)) for n in ("one", "two", "three")]


def test_steps_run_in_order_and_a_rerun_skips_finished_ones(tmp_path: Path) -> None:
    out, log = tmp_path / "out.txt", tmp_path / "log.txt"
    seen: list[tuple[str, str]] = []
    run_steps(_steps(out), tmp_path / "stamps", log, progress=lambda s, st, t: seen.append((s, st)))
    assert out.read_text().split() == ["one", "two", "three"]
    assert [s for s, st in seen if st == "done"] == ["one", "two", "three"]
    seen.clear()
    run_steps(_steps(out), tmp_path / "stamps", log, progress=lambda s, st, t: seen.append((s, st)))
    assert out.read_text().split() == ["one", "two", "three"]
    assert {st for _, st in seen} == {"cached"}
    assert "### [two] $ echo two" in log.read_text()


def test_a_failing_step_names_itself_and_the_log_and_a_rerun_resumes_there(tmp_path: Path) -> None:
    out, log = tmp_path / "out.txt", tmp_path / "log.txt"
    with pytest.raises(CasekitError) as err:
        run_steps(_steps(out, fail_at="two"), tmp_path / "stamps", log)
    assert "'two'" in err.value.message and err.value.file == str(log)
    assert out.read_text().split() == ["one", "two"]
    run_steps(_steps(out), tmp_path / "stamps", log)
    assert out.read_text().split() == ["one", "two", "two", "three"]  # "one" was not redone


def test_a_changed_step_or_force_runs_again(tmp_path: Path) -> None:
    out, log = tmp_path / "out.txt", tmp_path / "log.txt"
    run_steps(_steps(out), tmp_path / "stamps", log)
    changed = [Step("one", (f"echo ONE >> {out}",)), *_steps(out)[1:]]
    run_steps(changed, tmp_path / "stamps", log)
    assert out.read_text().split() == ["one", "two", "three", "ONE"]
    run_steps(changed, tmp_path / "stamps", log, force=True)
    assert out.read_text().split()[-3:] == ["ONE", "two", "three"]


def test_a_step_whose_result_is_present_is_stamped_without_running(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    run_steps([Step("x", (f"echo x >> {out}",), done=lambda: True)], tmp_path / "stamps", tmp_path / "log")
    assert not out.exists()
    assert json.loads((tmp_path / "stamps" / "x.json").read_text())["skipped"] == "already present"


class _Pinned(Environment):
    name = "pinned"

    def __init__(self, pin: str) -> None:
        self.pin = pin

    def steps(self) -> list[Step]:
        return [Step("pip", (f"pip install {self.pin}",))]

    def check(self) -> EnvStatus:
        return EnvStatus(self.name, False, "test")


def test_the_recipe_hash_names_the_environment_and_changes_with_its_pins(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CASEKIT_ENV_DIR", str(tmp_path))
    a, b = _Pinned("x==1"), _Pinned("x==2")
    assert a.recipe_hash() == _Pinned("x==1").recipe_hash() != b.recipe_hash()
    assert a.state_dir().parent == tmp_path and a.state_dir().name.startswith("pinned-")


def test_every_environment_has_steps_and_a_stable_recipe() -> None:
    for name, env in ENVIRONMENTS.items():
        assert env.steps(), name
        assert env.recipe_hash() == env.recipe_hash()
        assert len(env.recipe_hash()) == 16


def test_env_check_reports_every_environment_with_a_reason_when_unusable() -> None:
    r = CliRunner().invoke(app, ["env", "check", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    rows = {row["name"]: row for row in data["environments"]}
    assert set(rows) == set(ENVIRONMENTS.names())
    from casekit.runner.base import RUNNERS

    # the runners (where submissions run) as the text output shows them
    assert {row["name"] for row in data["runners"]} == set(RUNNERS.names())
    assert all(row["usable"] or row["reason"] for row in data["runners"])
    assert rows["dolfinx"]["usable"] is True  # the test environment itself has DOLFINx
    for row in rows.values():
        assert row["usable"] or row["reason"]


def test_env_install_of_an_unknown_environment_is_a_clear_error() -> None:
    r = CliRunner().invoke(app, ["env", "install", "fenics-legacy"])
    assert r.exit_code != 0
    assert "fenics-legacy" in r.output and "dolfinx" in r.output
