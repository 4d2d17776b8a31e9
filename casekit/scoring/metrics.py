"""The error that gates accuracy and the auxiliary metrics (which never gate).

Every metric uses the valid (in-domain) grid points of every output component.
"""

from __future__ import annotations

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


def auxiliary(u: dict[str, np.ndarray], ref: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, float]:
    """RMSE, MAE, R^2 and fRMSE (masked, component-wise DFT)."""
    names = sorted(ref)
    a, b = _stack(u, mask, names), _stack(ref, mask, names)
    d = a - b
    ss_res = float(np.sum(d**2))
    ss_tot = float(np.sum((b - b.mean(axis=0)) ** 2))
    out = {
        "rmse": float(np.sqrt(np.mean(d**2))),
        "mae": float(np.mean(np.abs(d))),
        "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0),
    }
    spectra = []
    for n in names:
        du = np.where(mask, u[n] - ref[n], 0.0)
        spectra.append(np.abs(np.fft.fftn(du)) ** 2)
    out["frmse"] = float(np.sqrt(np.mean(np.concatenate([s.ravel() for s in spectra])) / mask.size))
    return out


def error_profile(u: dict[str, np.ndarray], ref: dict[str, np.ndarray], mask: np.ndarray,
                  points: np.ndarray, boundary_distance: dict[str, np.ndarray], band: float) -> dict[str, object]:
    """Where the error is (feedback, never gating): the share of the squared error at grid points
    within ``band`` of the boundary, by nearest boundary part, and by output component.
    ``points`` are the grid points (rows of the flattened grid), ``boundary_distance`` the
    distance of each to each boundary part."""
    names = sorted(ref)
    sq = np.stack([np.where(mask, (u[n] - ref[n]) ** 2, 0.0).ravel() for n in names], axis=1)
    total = float(sq.sum())
    if not total > 0:
        return {}
    per_point = sq.sum(axis=1)
    tags = sorted(boundary_distance)
    dist = np.column_stack([boundary_distance[t] for t in tags])
    near = dist.min(axis=1) <= band
    nearest = dist.argmin(axis=1)
    by_part = {t: float(per_point[near & (nearest == i)].sum() / total) for i, t in enumerate(tags)}
    out: dict[str, object] = {"boundary_band_share": float(per_point[near].sum() / total),
                              "by_boundary_part": {t: round(s, 4) for t, s in by_part.items() if s > 0}}
    if len(names) > 1:
        out["by_component"] = {n: round(float(sq[:, i].sum() / total), 4) for i, n in enumerate(names)}
    return out
