"""A gmsh model written once as a list of gmsh API calls, then run or printed.

casekit meshes a domain by running its script in the live gmsh (``casekit.domains.meshing``),
and gives agents the same script as Python source (``casekit.domains.codegen``): one builder for
both, so what a prompt shows is what casekit meshes.  The calls are the gmsh API's own
(``gmsh.model.geo.addPoint``, ``gmsh.model.addPhysicalGroup``, ...), not pygmsh's: pygmsh creates
physical groups and mesh constraints only inside its own ``generate_mesh`` (which also meshes,
with its own options, and returns a meshio object), so a model meshed elsewhere had to reach into
its private queues, and it cannot print a model as source.

A script has two parts: geometry (``model.geo.*``) and, after one synchronisation, what is set
on the model (physical groups, mesh constraints, periodicity, size fields; a second
synchronisation would drop constraints already set).  A call's result is a :class:`Ref`;
arguments may hold refs, lists of refs, negated refs (a curve run backwards) and :class:`Num` s,
numbers that depend on the mesh size ``h`` (the argument of the printed function).  A call may
be conditional on a :class:`Cond` of ``h``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Ref:
    """The result of an earlier call (printed as its variable name)."""

    name: str

    def __neg__(self) -> Neg:
        return Neg(self)


@dataclass(frozen=True)
class Neg:
    """A curve or surface id taken with the opposite orientation."""

    ref: Ref


@dataclass(frozen=True)
class Num:
    """A number computed from the mesh size ``h``: its source text and its value."""

    text: str
    value: Callable[[float], float]

    def _bin(self, other: Any, op: str, fn: Callable[[float, float], float], swap: bool = False) -> Num:
        o = _num(other)
        a, b = (o, self) if swap else (self, o)
        return Num(f"({a.text} {op} {b.text})", lambda h: fn(a.value(h), b.value(h)))

    def __mul__(self, other: Any) -> Num:
        return self._bin(other, "*", lambda x, y: x * y)

    def __rmul__(self, other: Any) -> Num:
        return self._bin(other, "*", lambda x, y: x * y, swap=True)

    def __truediv__(self, other: Any) -> Num:
        return self._bin(other, "/", lambda x, y: x / y)

    def __rtruediv__(self, other: Any) -> Num:
        return self._bin(other, "/", lambda x, y: x / y, swap=True)

    def __add__(self, other: Any) -> Num:
        return self._bin(other, "+", lambda x, y: x + y)

    def __lt__(self, other: Any) -> Cond:
        o = _num(other)
        return Cond(f"{self.text} < {o.text}", lambda h: self.value(h) < o.value(h))

    def __gt__(self, other: Any) -> Cond:
        o = _num(other)
        return Cond(f"{self.text} > {o.text}", lambda h: self.value(h) > o.value(h))


def _num(v: Any) -> Num:
    if isinstance(v, Num):
        return v
    if not isinstance(v, int | float):
        raise TypeError(f"not a number: {v!r}")
    return Num(repr(v), lambda h: v)


@dataclass(frozen=True)
class Cond:
    text: str
    holds: Callable[[float], bool]


#: the mesh size
H = Num("h", lambda h: h)


def rounded(n: Num) -> Num:
    return Num(f"round({n.text})", lambda h: round(n.value(h)))


def at_least(low: int, n: Num) -> Num:
    return Num(f"max({low}, {n.text})", lambda h: max(low, n.value(h)))


@dataclass
class _Call:
    function: str  # dotted path below the gmsh module, e.g. "model.geo.addPoint"
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    result: Ref | None
    when: Cond | None = None


@dataclass
class Script:
    """gmsh calls in order: :meth:`geo` for geometry, :meth:`model` for what is set after the
    synchronisation."""

    geometry: list[_Call] = field(default_factory=list)
    settings: list[_Call] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=dict)

    def geo(self, function: str, *args: Any, **kwargs: Any) -> Ref:
        """``gmsh.model.geo.<function>(...)``; returns its result."""
        ref = self._add(self.geometry, "model.geo." + function, args, kwargs, keep=True)
        assert ref is not None
        return ref

    def model(self, function: str, *args: Any, keep: bool = False, when: Cond | None = None,
              **kwargs: Any) -> Ref | None:
        """``gmsh.<function>(...)`` after the synchronisation (``function`` below ``gmsh``, e.g.
        ``model.mesh.setRecombine``); ``keep`` keeps its result; ``when`` makes it conditional."""
        return self._add(self.settings, function, args, kwargs, keep=keep, when=when)

    def _add(self, calls: list[_Call], function: str, args: tuple[Any, ...], kwargs: dict[str, Any],
             keep: bool, when: Cond | None = None) -> Ref | None:
        ref = None
        if keep:
            prefix = _prefix(function)
            n = self._counts[prefix] = self._counts.get(prefix, 0) + 1
            ref = Ref(f"{prefix}{n}")
        calls.append(_Call(function, args, kwargs, ref, when))
        return ref

    def _all(self) -> list[_Call]:
        return [*self.geometry, _Call("model.geo.synchronize", (), {}, None), *self.settings]

    # -- running --------------------------------------------------------------------
    def run(self, gmsh: Any, h: float) -> dict[str, Any]:
        """Run every call on the live ``gmsh`` module; returns each ref's value by name."""
        values: dict[str, Any] = {}

        def value(a: Any) -> Any:
            if isinstance(a, Ref):
                return values[a.name]
            if isinstance(a, Neg):
                return -values[a.ref.name]
            if isinstance(a, Num):
                return a.value(h)
            if isinstance(a, list | tuple):
                return type(a)(value(x) for x in a)
            return a

        for c in self._all():
            if c.when is not None and not c.when.holds(h):
                continue
            target = gmsh
            for part in c.function.split("."):
                target = getattr(target, part)
            out = target(*(value(a) for a in c.args), **{k: value(v) for k, v in c.kwargs.items()})
            if c.result is not None:
                values[c.result.name] = out
        return values

    # -- printing -------------------------------------------------------------------
    def source(self, indent: str = "    ") -> str:
        """The calls as the body of ``def build_gmsh_model(h):`` (``gmsh`` imported and
        initialised by the caller)."""
        lines = []
        for c in self._all():
            args = [_text(a) for a in c.args] + [f"{k}={_text(v)}" for k, v in c.kwargs.items()]
            line = f"gmsh.{c.function}({', '.join(args)})"
            if c.result is not None:
                line = f"{c.result.name} = {line}"
            lines.extend([f"if {c.when.text}:", "    " + line] if c.when is not None else [line])
        return "\n".join(indent + line for line in lines)


def _prefix(function: str) -> str:
    name = function.rsplit(".", 1)[-1]
    return {"addPoint": "p", "addLine": "c", "addCircleArc": "c", "addEllipseArc": "c", "addCurveLoop": "loop",
            "addPlaneSurface": "s", "addSurfaceLoop": "shell", "addVolume": "v", "addPhysicalGroup": "group",
            "add": "field"}.get(name, "r")


def _text(a: Any) -> str:
    if isinstance(a, Ref):
        return a.name
    if isinstance(a, Neg):
        return f"-{a.ref.name}"
    if isinstance(a, Num):
        return a.text
    if isinstance(a, list):
        return "[" + ", ".join(_text(x) for x in a) + "]"
    if isinstance(a, tuple):
        return "(" + ", ".join(_text(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, float):
        return repr(a + 0.0) if math.isfinite(a) else repr(a)
    return repr(a)
