"""casekit domain (filled in by the domain work)."""
