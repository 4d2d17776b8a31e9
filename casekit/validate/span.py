"""The span leak check: the hidden output must stay far from everything visible, combined.

A single visible expression may be far from the answer while a short linear combination of
visible fields reproduces it: the final field of a separable transient solution is the initial
data times a number read off a boundary datum, a Gaussian peak is the ``exp`` factor of its
forcing plus a linear background.  This check fits the hidden output at t_end, by least squares
over the in-domain grid points, with the whole dictionary of visible fields
(:mod:`casekit.solvers.baselines.visible`: initial data, forcing and every boundary datum at
five times, their time coefficients, every function atom, a linear background).  The fit is
the *oracle* one -- it may use the hidden field to choose the coefficients, which no agent can
-- so a residual above the accuracy threshold proves that no linear combination of these
fields, however chosen, passes.

* **Validation** requires the relative residual to be at least :data:`SPAN_GAP_MIN` (before
  the build knows tau_acc; the leak check's gap is 0.1 for one expression).
* **The build** requires residual / tau_acc of at least :data:`SPAN_MARGIN` on the reference
  (manufactured or numerical), or the residual halfway from tau_acc to 1 where five thresholds
  exceed what any residual can be (:func:`largest_threshold`), and records the ratio with the trial.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from casekit.solvers.baselines.view import AgentView, lstsq
from casekit.solvers.baselines.visible import spans

#: smallest relative residual validation accepts (no tau_acc is known before the build)
SPAN_GAP_MIN = 0.05
#: smallest residual / tau_acc the build accepts: even with coefficients chosen knowing the answer
#: (which no agent can), no combination of a span comes within five accuracy thresholds; the
#: realistic inverters (coefficients from the boundary data) must already fail at one
SPAN_MARGIN = 5.0


def largest_threshold(residual: float) -> float:
    """The largest accuracy threshold tau_acc at which a reference whose closest span fit has the
    relative ``residual`` counts as far from every span: ``residual >= SPAN_MARGIN x tau`` -- or,
    where that is out of reach because a residual never exceeds 1 (the zero field's; tau above
    0.2 would need more), at least halfway from the threshold to 1: ``residual >= (1 + tau) / 2``.
    A lax threshold (a coarse calibration's, tau 0.24) then still asks the best oracle fit to miss
    by 0.62, and a reference 0.87 from every span is not refused for a margin no field can meet.
    The halfway rule never reaches the residual itself: at a residual of 1 (nothing in any span)
    the threshold stays ``1 - 1/SPAN_MARGIN`` below it, so the zero field never passes. (Every
    calibration threshold is at most 0.5, where this cap never binds.)"""
    halfway = min(2.0 * residual - 1.0, residual * (1.0 - 1.0 / SPAN_MARGIN))
    return max(residual / SPAN_MARGIN, halfway)


#: what the fit covers (part of a build's trial key: a trial made by an earlier method is redone)
METHOD = "each span's least squares of the output, and of the components behind a magnitude"
#: at most this many in-domain points take part in a fit (evenly strided)
MAX_POINTS = 3000
#: fields named in a report (largest contributions first)
LEADING = 3


@dataclass(frozen=True)
class SpanFit:
    #: relative L2 residual of the best fit of the hidden output by the closest span
    residual: float
    #: that span's name (``casekit.solvers.baselines.visible.spans``)
    span: str
    #: how many fields it held
    fields: int
    #: the fields that carry most of the best fit
    leading: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"residual": self.residual, "span": self.span, "fields": self.fields, "leading": list(self.leading)}

    def describe(self) -> str:
        return (f"{self.residual:.3g} (relative L2) from a combination of the {self.span} span, {self.fields} "
                f"visible fields led by {', '.join(self.leading) or '-'}")


def fit(spec: dict[str, Any], points: np.ndarray, hidden: np.ndarray, vector: np.ndarray | None = None) -> SpanFit:
    """The best fit of ``hidden`` ((N,) or (N, k) at ``points`` inside the domain) by each span
    of visible fields of ``spec``; the closest span's.  Each component is fitted on its own
    (the most an attacker can do).  ``vector`` ((N, k)): the components of the vector unknown
    whose magnitude ``hidden`` is -- each span then also fits the components, and the magnitude of
    that fit counts when it comes closer: a magnitude is not linear in the components, so fitting
    it alone bounds no attacker who fits the components (span_fit came to 3.05 tau_acc of four 3-D
    Stokes magnitudes whose magnitude fit stayed 8.06 tau_acc away)."""
    if len(points) > MAX_POINTS:
        keep = np.linspace(0, len(points) - 1, MAX_POINTS).astype(int)
        points, hidden = points[keep], hidden[keep]
        vector = None if vector is None else vector[keep]
    h = np.asarray(hidden, dtype=float).reshape(len(points), -1)
    v = None if vector is None else np.asarray(vector, dtype=float).reshape(len(points), -1)
    best: SpanFit | None = None
    for name, dictionary in spans(AgentView(spec)).items():
        found = _fit_one(name, dictionary, points, h, v)
        if best is None or found.residual < best.residual:
            best = found
    assert best is not None
    return best


def _fit_one(name: str, dictionary: list[Any], points: np.ndarray, h: np.ndarray,
             vector: np.ndarray | None = None) -> SpanFit:
    with np.errstate(all="ignore"):
        basis = np.column_stack([np.broadcast_to(np.asarray(f.values(points), dtype=float), (len(points),))
                                 for f in dictionary])
    basis = np.where(np.isfinite(basis), basis, 0.0)
    coef = lstsq(basis, h)
    norm = float(np.linalg.norm(h))
    residual = float(np.linalg.norm(h - basis @ coef)) / norm if norm > 0 else float("inf")
    if vector is not None and norm > 0:  # the magnitude of the components' fit
        by_component = lstsq(basis, vector)
        magnitude = np.linalg.norm(basis @ by_component, axis=1)
        through = float(np.linalg.norm(h[:, 0] - magnitude)) / norm
        if through < residual:
            residual, coef, name = through, by_component, f"{name} (per component)"
    share = np.linalg.norm(basis[:, :, None] * coef[None, :, :], axis=(0, 2))
    order = np.argsort(-share)[:LEADING]
    return SpanFit(residual, name, len(dictionary), tuple(dictionary[i].name for i in order if share[i] > 0))


def of_arrays(spec: dict[str, Any], arrays: dict[str, np.ndarray], mask: np.ndarray,
              vector: dict[str, np.ndarray] | None = None) -> SpanFit:
    """:func:`fit` of output arrays on the evaluation grid (a reference), inside ``mask``;
    ``vector``: the component arrays behind a magnitude output, when known (a manufactured case)."""
    view = AgentView(spec)
    flat = np.ravel(mask)
    points = view.points[flat]
    hidden = np.column_stack([np.ravel(arrays[name])[flat] for name in sorted(arrays)])
    components = None if not vector else np.column_stack([np.ravel(vector[n])[flat] for n in sorted(vector)])
    return fit(spec, points, hidden, components)
