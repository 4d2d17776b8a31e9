"""Domain templates: registry, exact geometry, meshing."""

from casekit.domains.template import DOMAINS, Domain, DomainTemplate, resolve

__all__ = ["DOMAINS", "Domain", "DomainTemplate", "resolve"]
