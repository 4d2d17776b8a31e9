"""Importers of third-party benchmark data into casekit case sources (registry by format name)."""

from casekit.registry import Registry

IMPORTERS: Registry = Registry("import format", plugins="casekit.importers.formats")
