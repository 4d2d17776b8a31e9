"""One module per kind of form (casekit.solvers.forms); each registers its families."""
