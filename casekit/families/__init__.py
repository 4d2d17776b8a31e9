"""PDE families: registry, strong forms, design axes."""

from casekit.families.base import FAMILIES, Axis, Family, Output, Param, Unknown

__all__ = ["FAMILIES", "Axis", "Family", "Output", "Param", "Unknown"]
