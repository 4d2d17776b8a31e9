"""``casekit build``: derivation -> validation -> meshing -> reference -> calibration -> trial."""
