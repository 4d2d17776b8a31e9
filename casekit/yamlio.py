"""YAML for case sources: safe, bounded loading and deterministic dumping.

Loading rejects what a hostile source could use to stall or mislead the tools: duplicate keys,
anchors and aliases (the "billion laughs" expansion), nesting deeper than :data:`MAX_DEPTH`,
files over :data:`MAX_BYTES`, non-finite floats and integers of more than
:data:`casekit.jsonio.MAX_INT_DIGITS` digits -- each with a one-line error naming where.
Dumping never writes anchors or aliases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from casekit.errors import CasekitError
from casekit.jsonio import check_numbers

MAX_BYTES = 1 << 20
MAX_DEPTH = 32


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys instead of keeping the last one, anchors,
    aliases and deep nesting."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise yaml.composer.ComposerError(None, None, "anchors and aliases (&name, *name) are not allowed",
                                              event.start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep",
                                                  event.start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, (str, int, float, bool)) or key is None:
            raise yaml.constructor.ConstructorError(
                None, None, f"mapping keys must be strings, found {key!r}", key_node.start_mark
            )
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=deep)
    return out


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def loads(text: str, *, file: str | None = None) -> Any:
    if len(text) > MAX_BYTES:
        raise CasekitError(f"the file is larger than {MAX_BYTES} bytes", file=file)
    try:
        data = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise CasekitError(f"not valid YAML{where}: {problem}", file=file) from None
    except RecursionError:
        raise CasekitError(f"not valid YAML: nested more than {MAX_DEPTH} levels deep", file=file) from None
    except ValueError as exc:  # an integer literal past Python's conversion limit (4300 digits)
        raise CasekitError(f"not valid YAML: a number too long to read ({exc.args[0].split(':')[0]})",
                           file=file, valid="numbers of at most 30 digits") from None
    check_numbers(data, file=file)
    return data


def load(path: Path) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CasekitError("file not found", file=str(path)) from None
    except UnicodeDecodeError:
        raise CasekitError("not UTF-8 text", file=str(path)) from None
    return loads(text, file=str(path))


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # shared objects are written out, never aliased
        return True


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_representer)


def dumps(obj: Any) -> str:
    """Block-style YAML with the caller's key order; the same object gives the same text."""
    return yaml.dump(
        obj, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
        width=100,
    )
