"""An attack, for the tests: a *memorising* submission.

It has seen the public release (its records and references are in its training data, so to
speak): it recognises a case by the sha256 of its case_spec and writes the released reference,
and solves nothing otherwise (zeros).  On the release it passes every case; on a private campaign
drawn in the release's distribution it fails every one -- which ``casekit campaign report`` must
flag.  Not a product feature: casekit never writes such a thing.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

SOLVER = '''"""A memorising submission: the released reference of a case it recognises, zeros otherwise."""
import base64, hashlib, io, json

import numpy as np

KNOWN = json.loads({known!r})


def _key(case_spec):
    spec = {{k: v for k, v in case_spec.items() if k != "resolution"}}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def solve(case_spec):
    g = case_spec["eval_grid"]
    b = g["bbox"]
    axes = {{"x": np.linspace(b[0], b[1], g["nx"]), "y": np.linspace(b[2], b[3], g["ny"])}}
    if g.get("nz"):
        axes["z"] = np.linspace(b[4], b[5], g["nz"])
    shape = tuple(len(axes[a]) for a in ("z", "y", "x") if a in axes)
    known = KNOWN.get(_key(case_spec))
    if known is not None:
        fields = {{k: np.load(io.BytesIO(base64.b64decode(v))) for k, v in known.items()}}
    else:
        out = case_spec["output"]
        fields = {{name: np.zeros(shape) for name in out.get("components") or [out["field"]]}}
    np.savez("solution.npz", **axes, **fields)
    with open("meta.json", "w") as fh:
        json.dump({{"wall_time_sec": 0.0, "status": "ok"}}, fh)
'''


def spec_key(case_spec: dict[str, Any]) -> str:
    spec = {k: v for k, v in case_spec.items() if k != "resolution"}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def _encode(a: np.ndarray) -> str:
    buf = io.BytesIO()
    np.save(buf, np.asarray(a, dtype=float), allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def memorised(release: Path) -> dict[str, dict[str, str]]:
    """The release's references by the sha256 of their case_spec (what the memoriser knows)."""
    from casekit.evaluate.references import MANUFACTURED_REFERENCE, read_arrays, sample_manufactured

    out = {}
    for line in (release / "cases.jsonl").read_text().splitlines():
        rec = json.loads(line)
        meta = rec["evaluation_metadata"]
        if meta["reference_path"] == MANUFACTURED_REFERENCE:
            arrays = sample_manufactured(rec["pde_classification"]["equation_family"], meta["manufactured_solution"],
                                         rec["case_spec"])
        else:
            arrays = {k: v for k, v in read_arrays(release / meta["reference_path"]).items() if k not in "xyz"}
        out[spec_key(rec["case_spec"])] = {k: _encode(v) for k, v in arrays.items()}
    return out


def write_memoriser(release: Path, out: Path, case_dirs: list[str]) -> Path:
    """``out/<case>/solver.py`` for every name in ``case_dirs`` (the release's cases and the
    campaign's: a system submits for every case it is given)."""
    source = SOLVER.format(known=json.dumps(memorised(release)))
    for name in case_dirs:
        (out / name).mkdir(parents=True, exist_ok=True)
        (out / name / "solver.py").write_text(source)
    return out
