"""zero: the zero field."""

import numpy as np

from casekit.solvers.baselines import Inverter, register

register(Inverter("zero", "the zero field", lambda view: np.zeros(len(view.points))))
