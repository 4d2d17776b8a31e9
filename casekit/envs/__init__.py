"""Track environments: reproducible, cached installs of the FEM libraries and checks of what is
usable on this machine.  One module per environment under ``casekit/envs/recipes``."""

from casekit.envs.base import ENVIRONMENTS, Environment, EnvStatus, Step, run_steps

__all__ = ["ENVIRONMENTS", "EnvStatus", "Environment", "Step", "run_steps"]
