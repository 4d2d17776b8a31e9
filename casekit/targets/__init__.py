"""Target values (FEABench style): scalar quantities of interest a case asks for beside its field.

A case source's ``targets`` block lists them, each ``{name, kind, ...}``; the kinds are
registered in :data:`TARGET_KINDS` (one module each under ``casekit/targets/kinds/``).  A kind
knows the fields it takes (``schemas/case_source.schema.json#/$defs/target`` states them), the
agent-visible entry it puts in the case_spec (never the value), its exact value from the
manufactured solution (sympy, then quadrature on the exact geometry: ``casekit.targets.quadrature``),
a natural scale of the quantity (a value far below it cannot be gated by a relative error) and
its wording in prompts.  How a solver computes a kind is the track's business (the DOLFINx
track: ``casekit/tracks/dolfinx/solvers/targets.py``); a submission writes ``targets.json``
(``{name: number}``) next to ``solution.npz`` (``casekit.solvers.targets``).  Transient cases ask
for the values at t_end.  Gates: the relative error of each value, against a threshold
calibrated like the field's (``casekit.thresholds.target_thresholds``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from casekit.registry import Registry
from casekit.solvers.targets import TARGETS_FILE

if TYPE_CHECKING:
    from casekit.derive import Derived
    from casekit.domains import Domain
    from casekit.families import Family
    from casekit.model.source import TargetSource
    from casekit.targets.quadrature import PointFn

#: a target whose exact value is below this share of its natural scale is refused (a relative
#: error of a near-zero quantity gates nothing sensible)
MIN_SHARE = 0.05
#: a point or a maximum closer to the boundary than this share of the diameter is refused
#: (boundary data would give it away)
MIN_DEPTH = 0.05
#: the most targets a case may ask for
MAX_TARGETS = 8


@dataclass(frozen=True)
class Issue:
    """A problem with one target: the field under ``/targets/<i>`` and what would be valid."""

    field: str
    message: str
    valid: str | None = None


@dataclass(frozen=True)
class Exact:
    value: float
    #: the quantity's natural size (e.g. the mean of |u|): the value must not be tiny against it
    scale: float
    #: where it is attained (maxima), for messages
    where: tuple[float, ...] | None = None
    #: distance of that point from the boundary
    depth: float | None = None


class Context:
    """What a kind needs from a derived case: the geometry, the hidden solution at t_end and the
    output field's quantities."""

    def __init__(self, d: Derived) -> None:
        self.d = d
        self.domain = d.domain
        self.dim = d.dim
        self.t = d.t_out

    def quantities(self) -> list[str]:
        """What ``of`` may name: the output field, or one of its components."""
        comps = self.d.output.components(self.dim)
        return comps if comps else [self.d.output.name]

    def default_of(self) -> str | None:
        comps = self.d.output.components(self.dim)
        return None if comps else self.d.output.name

    def field_expr(self, of: str | None) -> Any:
        """The hidden quantity as sympy (a tuple for a magnitude: norm taken numerically)."""
        assert self.d.solution is not None
        out = self.d.output
        u = self.d.solution[out.of]
        comps = out.components(self.dim)
        if comps:
            return u[comps.index(of)] if of in comps else None
        return u

    def field(self, of: str | None) -> PointFn:
        """The hidden quantity at t_end as a numpy function of points."""
        from casekit import leak

        value = self.field_expr(of)
        kind = "scalar" if self.d.output.components(self.dim) else self.d.output.kind

        def f(pts: np.ndarray) -> np.ndarray:
            v = leak.evaluate(value, pts, self.t, self.dim)
            return np.asarray(leak.output_values(v, kind), dtype=float)

        return f


def default_of(source: dict[str, Any], domain: Domain) -> str:
    """The quantity an authored target is about: the output field, or its first component."""
    from casekit.families import FAMILIES

    out = FAMILIES.get(source["family"]).output(source["output"]["field"])
    comps = out.components(domain.dim)
    return comps[0] if comps else out.name


class TargetKind:
    """One kind of target; subclasses are registered in :data:`TARGET_KINDS`."""

    name: ClassVar[str]
    #: fields besides ``name`` and ``kind``: required ones, and optional ones
    required: ClassVar[tuple[str, ...]] = ()
    optional: ClassVar[tuple[str, ...]] = ()
    #: what the kind is, for listings
    doc: ClassVar[str] = ""

    def unavailable(self, family: Family, dim: int) -> list[Issue]:
        """Why no target of this kind can be asked of a ``dim``-D case of ``family`` (empty when
        one can): part of :meth:`check`, and what ``casekit new --targets`` asks before drawing."""
        return []

    def check(self, t: TargetSource, ctx: Context) -> list[Issue]:
        """Problems of a target's fields on this case (beyond the schema)."""
        issues: list[Issue] = self.unavailable(ctx.d.family, ctx.dim)
        for f in ("of", "boundary", "at"):
            if getattr(t, f) is not None and f not in (*self.required, *self.optional):
                issues.append(Issue(f, f"a {self.name} target takes no {f!r}",
                                    ", ".join((*self.required, *self.optional)) or "only name and kind"))
            if getattr(t, f) is None and f in self.required:
                issues.append(Issue(f, f"a {self.name} target needs {f!r}", self.field_help(f, ctx)))
        if "of" in (*self.required, *self.optional):
            of = t.of if t.of is not None else ctx.default_of()
            if of not in ctx.quantities():
                issues.append(Issue("of", f"{'of ' + repr(t.of) if t.of else 'a component'} must name the output "
                                    "field or one of its components", ", ".join(ctx.quantities())))
        return issues

    def field_help(self, field: str, ctx: Context) -> str:
        return {"of": ", ".join(ctx.quantities()), "at": f"[{', '.join(['number'] * ctx.dim)}] inside the domain",
                "boundary": ", ".join(ctx.domain.tags())}[field]

    def entry(self, t: TargetSource, ctx: Context) -> dict[str, Any]:
        """The agent-visible case_spec entry (never the value)."""
        out: dict[str, Any] = {"name": t.name, "kind": self.name}
        if "of" in (*self.required, *self.optional):
            out["of"] = t.of if t.of is not None else ctx.default_of()
        return out

    def exact(self, t: TargetSource, ctx: Context) -> Exact:
        raise NotImplementedError

    def describe(self, entry: dict[str, Any], case_spec: dict[str, Any]) -> str:
        """The target in words, from the case_spec alone (prompts)."""
        raise NotImplementedError

    def draw(self, source: dict[str, Any], domain: Domain, rng: np.random.Generator) -> dict[str, Any]:
        """A target of this kind for a case source being authored (``casekit new --targets``)."""
        of = default_of(source, domain)
        return {"name": f"{self.name}_{of}", "kind": self.name, **({"of": of} if of != source["output"]["field"]
                                                                    else {})}

    # helpers
    @staticmethod
    def when(case_spec: dict[str, Any]) -> str:
        time = case_spec["pde"].get("time")
        return f" at t = t_end = {time['t_end']:g}" if time else ""


TARGET_KINDS: Registry[TargetKind] = Registry("target kind", plugins="casekit.targets.kinds")


def register(kind: type[TargetKind]) -> type[TargetKind]:
    TARGET_KINDS.register(kind.name, kind())
    return kind


def describe(entry: dict[str, Any], case_spec: dict[str, Any]) -> str:
    return TARGET_KINDS.get(entry["kind"]).describe(entry, case_spec)


__all__ = ["MAX_TARGETS", "TARGETS_FILE", "TARGET_KINDS", "Context", "Exact", "Issue", "TargetKind", "describe",
           "register"]
