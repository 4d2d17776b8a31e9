"""The DOLFINx track."""

from casekit.tracks.base import FAMILY_NAMES, TRACKS, Track

TRACKS.register("dolfinx", Track("dolfinx", "python", "DOLFINx 0.11 (FEniCSx) from the dolfinx-solver-real wheel",
                                 families=FAMILY_NAMES))
