"""One module per inverter; each registers itself (``casekit.solvers.baselines.register``)."""
