"""The Firedrake track."""

from casekit.tracks.base import FAMILY_NAMES, TRACKS, Track

TRACKS.register("firedrake", Track("firedrake", "python", "Firedrake built from PyPI sources on a Debian PETSc",
                                   families=FAMILY_NAMES))
