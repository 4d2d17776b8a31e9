"""Environments as named steps with stamps: resumable, logged, identified by a recipe hash.

``install`` runs the recipe's steps in order; each finished step leaves a stamp (written
atomically) in the environment's state directory, so a re-run skips finished steps and a changed
recipe (a new hash) starts a fresh directory.  A failing step raises a CasekitError naming the
step and the log file.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError
from casekit.jsonio import content_hash, read_json, write_json
from casekit.registry import Registry


def find_python(version: str, override_env: str = "") -> str:
    """An interpreter of ``version`` ("3.12") for a track's own venv: ``$override_env``, then the
    PATH, pyenv's versions and Debian's."""
    import shutil

    for candidate in (os.environ.get(override_env) if override_env else None, shutil.which(f"python{version}"),
                      *sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}*/bin/python3")),
                      f"/usr/bin/python{version}"):
        if candidate and Path(candidate).exists():
            return candidate
    return f"python{version}"


def state_root() -> Path:
    return Path(os.environ.get("CASEKIT_ENV_DIR", str(Path.home() / ".cache" / "casekit" / "envs")))


@dataclass(frozen=True)
class Step:
    name: str
    #: shell commands, run with ``bash -euo pipefail -c``
    commands: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    #: a step is skipped (and stamped) when this returns True
    done: Callable[[], bool] | None = field(default=None, compare=False)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "commands": list(self.commands), "env": dict(sorted(self.env.items()))}


@dataclass
class EnvStatus:
    name: str
    usable: bool
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class Environment:
    name = ""
    description = ""
    #: container image for users with a container engine (recipe: the track's container/Dockerfile)
    image = ""

    def steps(self) -> list[Step]:
        raise NotImplementedError

    def recipe(self) -> object:
        """What identifies the environment's content (pins, options); hashed into its name."""
        return [s.describe() for s in self.steps()]

    def recipe_hash(self) -> str:
        return content_hash(self.recipe())[:16]

    def state_dir(self) -> Path:
        return state_root() / f"{self.name}-{self.recipe_hash()}"

    def check(self) -> EnvStatus:
        raise NotImplementedError

    def install(self, log: Path | None = None, force: bool = False,
                progress: Callable[[str, str, float], None] = lambda step, state, seconds: None) -> Path:
        state = self.state_dir()
        log = log or state / "install.log"
        run_steps(self.steps(), state / "stamps", log, env_vars=self.step_env(), force=force, progress=progress)
        return log

    def step_env(self) -> dict[str, str]:
        return {}


class PinnedVenvEnvironment(Environment):
    """A track environment of pinned PyPI wheels in a venv of its own, checked by a smoke solve
    (a script printing one JSON object) and an import of the track's modules.  A track declares
    ``pins``, ``smoke``, ``imports`` and ``python_override`` (the variable naming another
    interpreter)."""

    pins: tuple[str, ...] = ()
    smoke = ""
    imports = ""
    python_version = "3.12"
    python_override = ""

    def recipe(self) -> object:
        return {"pins": self.pins, "python": self.python_version, "smoke": self.smoke}

    def venv(self) -> Path:
        return self.state_dir() / "venv"

    def python(self) -> Path:
        return self.venv() / "bin" / "python"

    def steps(self) -> list[Step]:
        import shlex

        pip = f"{self.python()} -m pip install --no-input --quiet"
        py = find_python(self.python_version, self.python_override)
        return [
            Step("venv", (f"{py} -m venv --clear {self.venv()}",)),
            Step("wheels", (f"{pip} " + " ".join(f"'{p}'" for p in self.pins),
                            f"{self.python()} -m pip freeze > {self.state_dir() / 'freeze.txt'}")),
            Step("smoke", (f"{self.python()} -c {shlex.quote(self.smoke)} > {self.state_dir() / 'smoke.json'}",)),
        ]

    def check(self) -> EnvStatus:
        import json
        import subprocess

        smoke = self.state_dir() / "smoke.json"
        if not self.python().exists():
            return EnvStatus(self.name, False, "not installed", {"install": f"casekit env install {self.name}",
                                                                 "location": str(self.state_dir())})
        if not smoke.exists():
            return EnvStatus(self.name, False, "installed but the smoke solve has not passed",
                             {"location": str(self.state_dir())})
        r = subprocess.run([str(self.python()), "-c", f"import {self.imports}"], capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            why = (r.stderr.strip().splitlines() or [""])[-1]
            return EnvStatus(self.name, False, f"cannot import {self.imports}: {why}")
        return EnvStatus(self.name, True, details={**json.loads(smoke.read_text()), "python": str(self.python())})


def run_steps(steps: list[Step], stamps: Path, log: Path, *, env_vars: dict[str, str] | None = None,
              force: bool = False, progress: Callable[[str, str, float], None] = lambda s, st, t: None) -> None:
    stamps.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    for step in steps:
        stamp = stamps / f"{step.name}.json"
        if stamp.exists() and not force and read_json(stamp).get("step") == step.describe():
            progress(step.name, "cached", 0.0)
            continue
        t0 = time.monotonic()
        if step.done is not None and step.done() and not force:
            write_json(stamp, {"step": step.describe(), "seconds": 0.0, "skipped": "already present"})
            progress(step.name, "present", 0.0)
            continue
        progress(step.name, "running", 0.0)
        env = {**os.environ, **(env_vars or {}), **step.env, "DEBIAN_FRONTEND": "noninteractive"}
        with open(log, "a", encoding="utf-8") as fh:
            for cmd in step.commands:
                fh.write(f"\n### [{step.name}] $ {cmd}\n")
                fh.flush()
                r = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], stdout=fh, stderr=subprocess.STDOUT,
                                   env=env)
                if r.returncode != 0:
                    raise CasekitError(f"step {step.name!r} failed (exit status {r.returncode}) running: {cmd}",
                                       file=str(log), valid="see the log; re-running resumes from this step")
        seconds = time.monotonic() - t0
        write_json(stamp, {"step": step.describe(), "seconds": round(seconds, 1)})
        progress(step.name, "done", seconds)


def _load_tracks() -> None:
    """Every track registers its environment (``casekit/tracks/<name>/environment.py``)."""
    from casekit.tracks import TRACKS

    TRACKS.names()


ENVIRONMENTS: Registry[Environment] = Registry("environment", loader=_load_tracks)
