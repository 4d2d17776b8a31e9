"""Track environments: reproducible, cached installs of the FEM libraries and checks of what is
usable on this machine.  Each track brings its own (``casekit/tracks/<name>/environment.py``)."""

from casekit.envs.base import ENVIRONMENTS, Environment, EnvStatus, Step, run_steps

__all__ = ["ENVIRONMENTS", "EnvStatus", "Environment", "Step", "run_steps"]
