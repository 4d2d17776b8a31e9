"""The firedrake track."""

from casekit.tracks.base import TRACKS, Track

TRACKS.register("firedrake", Track("firedrake", "python", "Firedrake built from PyPI sources on a Debian PETSc"))
