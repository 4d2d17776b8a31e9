"""initial: the initial data as the answer at t_end."""

from casekit.solvers.baselines import Inverter, register

register(Inverter("initial", "the initial data as if at t_end",
                  lambda view: view.evaluate(view.initial, view.points, view.t_end),
                  applies=lambda view: view.initial is not None))
