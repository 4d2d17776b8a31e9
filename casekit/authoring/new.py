"""``casekit new``: write one complete, valid case source for a design point."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casekit import yamlio
from casekit.authoring.builder import build_source, design_levels
from casekit.authoring.design import DesignPoint
from casekit.errors import CasekitError, Problem
from casekit.families import FAMILIES, Family
from casekit.ids import public_id
from casekit.jsonio import atomic_write_text
from casekit.model.source import CaseSource

#: seeds tried after the requested one when a drawn solution fails validation
RETRIES = 6


@dataclass
class NewCase:
    source: dict[str, Any]
    seed: int
    rejected: list[tuple[int, list[Problem]]]

    @property
    def id(self) -> str:
        return self.source["id"]


def make_case(family: str, domain: str, levels: dict[str, str], seed: int, salt: bytes | None = None,
              targets: tuple[str, ...] = ()) -> NewCase:
    """Build and validate; a draw that fails validation is retried with the next seeds."""
    from casekit.domains import DOMAINS
    from casekit.validate import check_source

    rejected: list[tuple[int, list[Problem]]] = []
    fam = FAMILIES.get(family)
    DOMAINS.get(domain)  # an unknown name is refused as itself, before anything is drawn on it
    levels = design_levels(fam, levels)
    _targets_apply(fam, domain, targets)
    base_id = None
    for k in range(RETRIES + 1):
        s = seed + 1000 * k
        source = build_source(family, domain, levels, s, salt=salt, targets=targets)
        if base_id is None:
            base_id = source["id"]
        source["id"] = base_id if k == 0 else f"{base_id}_r{k}"
        if salt:
            source["public_id"] = public_id(source["id"], salt)
        problems = check_source(source)
        if not problems:
            return NewCase(source, s, rejected)
        rejected.append((s, problems))
        if any(p.check == "size" for p in problems):
            break  # derived data beyond the size bounds: the next seeds draw the same shapes
    last = rejected[-1][1]
    raise CasekitError(
        f"no valid {family} case on {domain} with {levels} after {len(rejected)} draw(s); the last one: "
        f"{last[0].render()}", problems=last)


def _targets_apply(family: Family, domain: str, kinds: tuple[str, ...]) -> None:
    """Refuse, before any draw, a target kind that no case of this family and domain can ask for
    (a boundary flux of linear elasticity): every draw would be rejected for it."""
    from casekit.domains import resolve
    from casekit.targets import TARGET_KINDS

    if not kinds:
        return
    dim = resolve(domain).dim
    for kind in kinds:
        for issue in TARGET_KINDS.get(kind).unavailable(family, dim):
            raise CasekitError(f"--targets {kind}: {issue.message} (on {domain}, {dim}-D)", valid=issue.valid)


def feasible(family: str) -> Any:
    """A predicate for sampling: whether a design point can be built at all."""
    def check(point: DesignPoint) -> bool:
        try:
            build_source(family, point.domain, point.as_dict(), 0)
        except CasekitError:
            return False
        return True

    return check


def write_case(new: NewCase, out: Path, *, force: bool = False) -> Path:
    """Write cases/<family>/<id>.yaml atomically; an existing file is kept unless ``force``."""
    source = CaseSource.from_dict(new.source)
    path = Path(out) / source.family / f"{source.id}.yaml"
    if path.exists() and not force:
        raise CasekitError("a case source with this id exists; pass --force to replace it or choose another --seed",
                           file=str(path))
    text = yamlio.dumps(source.to_dict())
    atomic_write_text(path, text)
    return path
