"""A tiny dataclass <-> JSON-dict mapper for casekit's data contracts.

Fields map to keys of the same name, in declaration order; ``None`` means absent (the key is
omitted), nested :class:`Model` s and lists of them convert recursively, everything else is
deep-copied as is.  So ``to_dict`` always emits keys in one stable order and
``from_dict(d).to_dict() == d`` for every schema-valid ``d`` in that order.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from functools import cache
from typing import Any, Self


def _model_type(tp: Any) -> tuple[str, type[Model]] | None:
    """('one', M) for M or M | None, ('list', M) for list[M], ('dict', M) for dict[str, M]."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _model_type(args[0]) if len(args) == 1 else None
    if origin is list:
        inner = typing.get_args(tp)[0]
        return ("list", inner) if isinstance(inner, type) and issubclass(inner, Model) else None
    if origin is dict:
        inner = typing.get_args(tp)[1]
        return ("dict", inner) if isinstance(inner, type) and issubclass(inner, Model) else None
    if isinstance(tp, type) and issubclass(tp, Model):
        return ("one", tp)
    return None


class Model:
    """Mixin for dataclasses that mirror a JSON object of a schema."""

    @classmethod
    @cache
    def _fields(cls) -> list[tuple[str, tuple[str, type[Model]] | None]]:
        hints = typing.get_type_hints(cls)
        return [(f.name, _model_type(hints[f.name])) for f in dataclasses.fields(cls)]  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        kwargs: dict[str, Any] = {}
        for name, kind in cls._fields():
            if name not in data:
                continue
            value = data[name]
            if kind is None or value is None:
                kwargs[name] = copy.deepcopy(value)
            elif kind[0] == "one":
                kwargs[name] = kind[1].from_dict(value)
            elif kind[0] == "list":
                kwargs[name] = [kind[1].from_dict(v) for v in value]
            else:
                kwargs[name] = {k: kind[1].from_dict(v) for k, v in value.items()}
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, kind in self._fields():
            value = getattr(self, name)
            if value is None:
                continue
            if kind is None:
                out[name] = copy.deepcopy(value)
            elif kind[0] == "one":
                out[name] = value.to_dict()
            elif kind[0] == "list":
                out[name] = [v.to_dict() for v in value]
            else:
                out[name] = {k: v.to_dict() for k, v in value.items()}
        return out
