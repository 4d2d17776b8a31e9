"""Close matches for a mistyped name: ``unknown domain template 'lshape'`` -> ``did you mean l_shape?``.

Every unknown name (a registry's, a design axis or level, a baseline kind) is an
:class:`~casekit.errors.UnknownName` whose message ends with the name as Python quotes it and whose
``valid`` lists the valid names, comma-separated; the command line adds the suggestion when it
prints the error (``casekit.cli.app``), so no raiser has to.
"""

from __future__ import annotations

import ast
import difflib
import re

#: the name an UnknownName's message quotes last, as ``repr`` writes a string
_QUOTED = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def close_matches(name: str, valid: list[str], n: int = 3) -> list[str]:
    """The valid names closest to ``name`` (difflib's ratio, case-insensitive; a name with the
    underscores or hyphens left out counts as its spelling), best first."""
    def key(s: str) -> str:
        return s.lower().replace("_", "").replace("-", "")

    by_key: dict[str, str] = {}
    for v in valid:
        by_key.setdefault(key(v), v)
    exact = by_key.get(key(name))
    if exact is not None and exact != name:
        return [exact]
    return [by_key[k] for k in difflib.get_close_matches(key(name), list(by_key), n=n, cutoff=0.6)
            if by_key[k] != name]


def did_you_mean(message: str, valid: str | None) -> str:
    """``"; did you mean X?"`` (or ``X or Y``) for the name that ``message`` quotes last, among the
    comma-separated ``valid`` names; empty when nothing is close."""
    quoted = _QUOTED.findall(message)
    if not quoted or not valid:
        return ""
    try:
        name = ast.literal_eval(quoted[-1])
    except (ValueError, SyntaxError):
        return ""
    if not isinstance(name, str):
        return ""
    matches = close_matches(name, [v.strip() for v in valid.split(",") if v.strip()])
    return f"; did you mean {' or '.join(matches)}?" if matches else ""
