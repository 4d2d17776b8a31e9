"""Load built records, agent view, hidden reference (manufactured from record metadata or npz), tau."""

import glob
import json
import os
import signal
from pathlib import Path

import numpy as np

from casekit.scoring import metrics
from casekit.scoring.artifacts import output_names
from casekit.solvers.baselines import output_arrays
from casekit.solvers.baselines.view import AgentView

ROOT = os.environ.get(
    "CASEKIT_DATASET", str(Path(__file__).resolve().parents[2] / "datasets" / "pdeagent-bench-repaired")
)


def record_paths():
    out = []
    for d in ("build", "build-authored"):
        out += sorted(glob.glob(f"{ROOT}/{d}/dolfinx/*/*.json"))
    return out


def load(path):
    with open(path) as fh:
        r = json.load(fh)
    if r.get("status") != "built":
        return None
    rec = r["record"]
    return dict(
        path=path,
        id=rec["id"],
        family=r["family"],
        rec=rec,
        spec=rec["case_spec"],
        tau=rec["evaluation_metadata"]["thresholds"]["tau_acc"],
        method=rec["evaluation_metadata"]["construction_method"],
        authored="build-authored" in path,
    )


def reference(c):
    """(ref dict, mask) as the evaluator sees them."""
    from casekit.validate.inversion import exact_arrays
    from casekit.validate.view import view_of_record

    spec = c["spec"]
    view = AgentView(spec)
    mask = view.inside.reshape(view.grid.shape)
    if c["method"] == "manufactured":
        cv = view_of_record(c["rec"])
        names = output_names(spec)
        ref = exact_arrays(
            spec, cv.solution[cv.output.of], cv.output.kind, names, cv.t_end, view.points, mask, view.dim
        )
    else:
        npz = c["path"][:-5] + ".reference.npz"
        with np.load(npz) as z:
            ref = {k: np.asarray(z[k]) for k in z.files if k not in ("x", "y", "z")}
        mask = mask & np.all([np.isfinite(a) for a in ref.values()], axis=0)
    return ref, mask


def to_arrays(view, values):
    """values (N,) or (N,k) at grid points -> output arrays, as casekit's baselines make them."""
    return output_arrays(view, values)


class Timeout(Exception):
    """A record's attack ran past its alarm (``signal.alarm``)."""


def _alarm(*_):
    raise Timeout()


signal.signal(signal.SIGALRM, _alarm)


def score(view, values, ref, mask):
    arr = to_arrays(view, values)
    if not all(np.isfinite(a[mask]).all() for a in arr.values()):
        return float("inf")
    return metrics.rel_l2(arr, ref, mask)
