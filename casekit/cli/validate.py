"""casekit validate (filled in below)."""
