"""What the guide tests share: the guides' code blocks by section, one real case_spec per domain
template, and running code blocks in a track's interpreter (``guide_driver.py``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from casekit.derive import derive
from casekit.domains.template import DOMAINS
from casekit.model.source import CaseSource, load_source_dict

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "guide_driver.py"
#: a field every element of degree >= 1 holds exactly, on straight and on curved (quadratic)
#: cells alike, and its extension past a cell's edge too: what sampling must give back
LINEAR = (1.0, 0.5, -0.25, 0.2)  # 1 + 0.5 x - 0.25 y + 0.2 z


def linear_coefficients(spec: dict[str, Any]) -> tuple[float, ...]:
    """:data:`LINEAR`, constant along the case's periodic directions (a periodic mesh holds no
    field that grows along them)."""
    c = list(LINEAR)
    for pair in spec["bc"].get("periodic", []):
        for axis, shift in enumerate(pair["translation"]):
            if shift:
                c[axis + 1] = 0.0
    return tuple(c)


def linear_code(spec: dict[str, Any], x: str = "X", y: str = "Y", z: str = "Z") -> str:
    """The case's linear field as Python source over the names ``x``, ``y``, ``z``."""
    c = linear_coefficients(spec)
    return f"{c[0]!r} + {c[1]!r} * {x} + {c[2]!r} * {y} + {c[3]!r} * {z}"


def linear(points: np.ndarray, spec: dict[str, Any] | None = None) -> np.ndarray:
    c = linear_coefficients(spec) if spec is not None else LINEAR
    return c[0] + sum(c[i + 1] * points[:, i] for i in range(points.shape[1]))


def sections(text: str) -> dict[str, list[str]]:
    """The ``python`` code blocks of a guide, by the heading they are under (in order)."""
    out: dict[str, list[str]] = {}
    heading = ""
    for part in re.split(r"(```python\n.*?```)", text, flags=re.S):
        if part.startswith("```python"):
            out.setdefault(heading, []).append(textwrap.dedent(part[len("```python\n"):-3]))
            continue
        for line in part.splitlines():
            if line.startswith("#"):
                heading = line.lstrip("#").strip()
    return out


def blocks(text: str) -> list[str]:
    """Every ``python`` code block of a guide, in order."""
    return [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, re.S)]


def _sources() -> dict[str, Path]:
    """A committed case source per template: casekit's own sample first, then the imported ones."""
    cases = REPO / "cases"
    found: dict[str, Path] = {}
    for path in sorted(cases.glob("*/*.yaml")) + sorted(cases.glob("*/*/*.yaml")):
        template = (load_source_dict(path).get("domain") or {}).get("template")
        if isinstance(template, str):
            found.setdefault(template, path)
    return found


@cache
def template_case(template: str) -> dict[str, Any]:
    """A real case_spec on ``template``: a committed case's, or (no committed case uses the
    template) the one ``casekit new`` writes for a Poisson case."""
    path = _sources().get(template)
    if path is not None:
        source = CaseSource.from_dict(load_source_dict(path))
    else:
        from tests.helpers import build_source

        source = CaseSource.from_dict(build_source("poisson", template, {}, 1))
    return derive(source).case_spec()  # type: ignore[no-any-return]


def templates(track: Any) -> list[str]:
    """The domain templates a track claims (every registered one when it names none)."""
    return list(track.domains) or DOMAINS.names()


def run_jobs(track: Any, jobs: list[dict[str, Any]], work: Path, path: str = "",
             timeout: float = 1800) -> dict[str, dict[str, Any]]:
    """Each job (``name``, ``case_spec``, ``blocks``: [(name, code)]) in the track's interpreter,
    in ``work/<name>``; the result of each by name (``ok``, else the block and the traceback)."""
    plan = [{"dir": str(work / job["name"]), "case_spec": job["case_spec"],
             "blocks": [{"name": n, "code": c} for n, c in job["blocks"]]} for job in jobs]
    work.mkdir(parents=True, exist_ok=True)
    (work / "plan.json").write_text(json.dumps(plan))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "HOME": str(work),
           **track.extra_env, **track.trusted_cache_env()}
    env.pop("PYTHONPATH", None)
    if path:
        env["PYTHONPATH"] = path
    r = subprocess.run([str(track.python()), str(DRIVER), str(work / "plan.json")], capture_output=True, text=True,
                       timeout=timeout, cwd=work, env=env)
    out = {}
    for job in jobs:
        result = work / job["name"] / "result.json"
        out[job["name"]] = json.loads(result.read_text()) if result.is_file() else {
            "ok": False, "block": "(the interpreter)", "error": f"exit status {r.returncode}: {r.stderr[-3000:]}"}
    return out


# --------------------------------------------------------------------------- expressions
#: where expressions are evaluated: x, y, z and t (and the reaction's u)
POINTS = np.array([[0.13, 0.71, 0.4], [0.52, 0.27, 0.9], [0.86, 0.49, 0.05]])
T_VALUE, U_VALUE = 0.3, 0.7


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in ("tag", "tags") for s in _strings(v)]
    return []


def spec_expressions(spec: dict[str, Any]) -> list[str]:
    """Every expression string of a case_spec: parameters, forcing, boundary and initial data."""
    return _strings(spec["pde"].get("params")) + _strings(spec["pde"]["forcing"]) + _strings(spec["bc"]) \
        + _strings(spec.get("ic"))


def printed_expressions(n: int = 60, seed: int = 30) -> list[str]:
    """Expressions as casekit prints them (``to_text``): the forms that need care -- integers
    beyond 64 bits, ``exp(1)``, rationals, floats in exponent form, every function of the
    grammar (``sign``, ``tanh``, ``min`` and ``max`` of several arguments) -- and ``n`` random
    trees over them (seeded), each one casekit reads back."""
    import random

    import sympy as sp

    from casekit.expr import X, Y, Z, parse, to_text
    from casekit.expr.parser import T

    big = sp.Integer(10**20)
    fixed = [sp.sin(X), big * X, sp.sin(big), sp.cos(big * Y) + X, sp.E * X, sp.exp(1) + Y, sp.Rational(1, 3) * X,
             sp.Float(1.5e-5) * Y, sp.Float(2.5e20) * X * Y, sp.sign(X - sp.Rational(1, 2)), sp.tanh(3 * X - 1),
             sp.Min(X, Y, sp.Rational(1, 2)), sp.Max(X, Y, Z, T), sp.Abs(X - Y), sp.atan2(Y, X + 2), sp.sqrt(2) * X,
             X ** sp.Rational(1, 3), sp.log(X + 2), sp.asin(X / 2), sp.acos(Y / 2), sp.atan(X), sp.sinh(X),
             sp.cosh(Y), sp.tan(X / 2), sp.exp(-T) * sp.sin(sp.pi * X), X**3 - 2 * Y**2, sp.Integer(7),
             sp.pi * sp.Integer(2) ** 70 * X, 1 / (1 + X**2)]
    rng = random.Random(seed)
    atoms = [X, Y, Z, T, sp.pi, sp.E, sp.Integer(2), sp.Integer(3), big, sp.Rational(2, 7), sp.Float(0.25),
             sp.Float(3.5e-7), sp.Float(1.25e18)]
    unary = [sp.sin, sp.cos, sp.tanh, sp.atan, sp.sign, sp.Abs, lambda a: sp.exp(sp.sin(a)),
             lambda a: sp.sqrt(a**2 + 1), lambda a: sp.log(a**2 + 2), lambda a: sp.asin(sp.tanh(a)),
             lambda a: sp.sinh(sp.sin(a)), lambda a: sp.cosh(sp.cos(a))]

    def tree(depth: int) -> sp.Expr:
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(atoms)
        kind = rng.randrange(6)
        if kind == 0:
            return tree(depth - 1) + tree(depth - 1)
        if kind == 1:
            return tree(depth - 1) * tree(depth - 1)
        if kind == 2:
            return tree(depth - 1) ** rng.randint(1, 3)
        if kind == 3:
            return rng.choice([sp.Min, sp.Max])(*(tree(depth - 1) for _ in range(rng.randint(2, 3))))
        if kind == 4:
            return sp.atan2(tree(depth - 1), 2 + X**2)
        return rng.choice(unary)(tree(depth - 1))

    exprs = fixed + [tree(4) for _ in range(n)]
    texts = []
    for e in exprs:
        if e.has(sp.zoo, sp.nan, sp.oo, sp.I):
            continue
        text = to_text(e)
        parse(text)  # casekit reads what it prints
        texts.append(text)
    return list(dict.fromkeys(texts))


def points(dim: int) -> np.ndarray:
    """:data:`POINTS` with z = 0 in 2-D."""
    out = POINTS.copy()
    if dim == 2:
        out[:, 2] = 0.0
    return out


def expected_values(texts: list[str], dim: int) -> list[list[float]]:
    """casekit's own values of each expression at :func:`points` (t = T_VALUE, u = U_VALUE)."""
    from casekit.expr.tree import points_function

    return [points_function(t, 3, params=("u",))(points(dim), T_VALUE, u=U_VALUE).tolist() for t in texts]


#: test-side code run after an idiom's definitions: the idiom's values of EXPRESSIONS at the
#: POINTS, into values.json (one entry per expression: the values, or the error it raised)
EVALUATE = {
    "numpy": """
import json as _json, traceback as _tb
_out = []
for _text in EXPRESSIONS:
    try:
        _v = expression(_text, x=POINTS[:, 0], y=POINTS[:, 1], z=POINTS[:, 2], t=T_VALUE, u=U_VALUE)
        _out.append([float(a) for a in _v])
    except Exception:
        _out.append(_tb.format_exc(limit=3)[-600:])
_json.dump(_out, open("values.json", "w"))
""",
    "ngsolve": """
import json as _json, traceback as _tb
_mesh = ng.Mesh(occ.OCCGeometry(occ.Rectangle(1, 1).Face(), dim=2).GenerateMesh(maxh=0.5))
_out = []
for _text in EXPRESSIONS:
    try:
        _cf = expression(_text, t=ng.Parameter(T_VALUE), u=U_VALUE)
        _v = [float(np.ravel(_cf(_mesh(float(p[0]), float(p[1]))))[0]) for p in POINTS]
        _out.append(_v)
    except Exception:
        _out.append(_tb.format_exc(limit=3)[-600:])
_json.dump(_out, open("values.json", "w"))
""",
}


def expression_prelude(texts: list[str], dim: int) -> str:
    """Defines EXPRESSIONS, POINTS (z = 0 in 2-D), T_VALUE and U_VALUE."""
    return (f"import numpy as np\nEXPRESSIONS = {texts!r}\nPOINTS = np.array({points(dim).tolist()!r})\n"
            f"T_VALUE, U_VALUE = {T_VALUE!r}, {U_VALUE!r}\n")
