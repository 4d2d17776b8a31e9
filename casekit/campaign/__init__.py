"""Fresh private campaigns: new cases drawn with a secret in a release's distribution, built and
packaged like the release, and scored beside it (``casekit campaign``)."""
