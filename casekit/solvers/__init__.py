"""Calibration and reference solvers, one sub-package per track.

These modules run *inside* the sandbox, through the same harness as agents' submissions: a
calibration solver is the function ``solve(case_spec, settings)`` wrapped into a ``solver.py``
whose ``solve(case_spec)`` passes private settings (mesh size, degree, time step, solver
options) that agents never see.
"""
