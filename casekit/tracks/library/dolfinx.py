"""The dolfinx track."""

from casekit.tracks.base import TRACKS, Track

TRACKS.register("dolfinx", Track("dolfinx", "python", "DOLFINx 0.11 (FEniCSx) from the dolfinx-solver-real wheel"))
