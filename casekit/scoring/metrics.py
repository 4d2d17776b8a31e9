"""The error that gates accuracy and the auxiliary metrics (which never gate).

Every metric uses the valid (in-domain) grid points of every output component.  A submission's
values are finite but may be as large as a double allows, so squares are summed scaled by the
largest difference (a share or a root-mean-square of scaled values cannot overflow), and every
number is checked finite here, where it is computed: an auxiliary metric beyond a double is left
out (they never gate), and a profile that still is not finite raises :class:`ScoringError`.
"""

from __future__ import annotations

import math

import numpy as np

#: a reference norm below this (times the number of values) counts as zero: the error is absolute
ZERO_NORM = 1e-12


def _stack(fields: dict[str, np.ndarray], mask: np.ndarray, names: list[str]) -> np.ndarray:
    return np.column_stack([fields[n][mask] for n in names])


def rel_l2(u: dict[str, np.ndarray], ref: dict[str, np.ndarray], mask: np.ndarray) -> float:
    """||u - ref|| / ||ref|| over valid points and all components (absolute when ||ref|| ~ 0)."""
    names = sorted(ref)
    a, b = _stack(u, mask, names), _stack(ref, mask, names)
    diff = float(np.linalg.norm(a - b))
    norm = float(np.linalg.norm(b))
    return diff / norm if norm > ZERO_NORM * max(1, b.size) else diff


def rel_scalar(value: float, exact: float) -> float:
    """|value - exact| / |exact|: the error of a target value (exact values are never near zero:
    casekit.targets refuses such targets)."""
    return abs(value - exact) / abs(exact)


class ScoringError(Exception):
    """A number of a verdict that cannot be computed finite: that attempt's ``scoring_error``."""

    category = "scoring_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def finite(value: float, what: str) -> float:
    """``value`` as a float when it is finite; else a :class:`ScoringError` naming ``what``."""
    v = float(value)
    if not math.isfinite(v):
        raise ScoringError(f"{what} is not finite ({v})")
    return v


def _scale(d: np.ndarray) -> float:
    """The largest |difference| (1 when there is none): squares of ``d / scale`` lie in [0, 1]."""
    peak = float(np.max(np.abs(d))) if d.size else 0.0
    return finite(peak, "the largest difference from the reference") or 1.0


def auxiliary(u: dict[str, np.ndarray], ref: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, float]:
    """RMSE, MAE, R^2 and fRMSE (masked, component-wise DFT): the finite ones (a metric beyond a
    double, such as R^2 against a nearly constant reference, is left out)."""
    names = sorted(ref)
    a, b = _stack(u, mask, names), _stack(ref, mask, names)
    d = a - b
    s = _scale(d)
    dn = d / s
    ss_res = float(np.sum(dn**2))  # the residual sum of squares over s**2
    ss_tot = float(np.sum((b - b.mean(axis=0)) ** 2))
    out = {
        "rmse": s * float(np.sqrt(np.mean(dn**2))),
        "mae": s * float(np.mean(np.abs(dn))),
        "r2": 1.0 - ss_res / ss_tot * s * s if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0),
    }
    spectra = []
    for n in names:
        du = np.where(mask, u[n] - ref[n], 0.0) / s
        spectra.append(np.abs(np.fft.fftn(du)) ** 2)
    out["frmse"] = s * float(np.sqrt(np.mean(np.concatenate([x.ravel() for x in spectra])) / mask.size))
    return {k: float(v) for k, v in out.items() if math.isfinite(v)}


def error_profile(u: dict[str, np.ndarray], ref: dict[str, np.ndarray], mask: np.ndarray,
                  points: np.ndarray, boundary_distance: dict[str, np.ndarray], band: float) -> dict[str, object]:
    """Where the error is (feedback, never gating): the share of the squared error at grid points
    within ``band`` of the boundary, by nearest boundary part, and by output component.
    ``points`` are the grid points (rows of the flattened grid), ``boundary_distance`` the
    distance of each to each boundary part.  Shares are of the squares scaled by the largest
    difference, so values whose squares sum beyond a double have a profile too; a share that is
    not finite raises :class:`ScoringError`."""
    names = sorted(ref)
    d = np.stack([np.where(mask, u[n] - ref[n], 0.0).ravel() for n in names], axis=1)
    if not d.size or not np.any(d):
        return {}
    sq = (d / _scale(d)) ** 2
    total = finite(sq.sum(), "the squared error of the profile")
    per_point = sq.sum(axis=1)
    tags = sorted(boundary_distance)
    dist = np.column_stack([boundary_distance[t] for t in tags])
    near = dist.min(axis=1) <= band
    nearest = dist.argmin(axis=1)

    def share(values: np.ndarray, what: str) -> float:
        return finite(values.sum() / total, f"the error profile's {what}")

    by_part = {t: share(per_point[near & (nearest == i)], f"share near {t!r}") for i, t in enumerate(tags)}
    out: dict[str, object] = {"boundary_band_share": share(per_point[near], "boundary_band_share"),
                              "by_boundary_part": {t: round(s, 4) for t, s in by_part.items() if s > 0}}
    if len(names) > 1:
        out["by_component"] = {n: round(share(sq[:, i], f"share of {n!r}"), 4) for i, n in enumerate(names)}
    return out
