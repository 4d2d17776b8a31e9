"""A case's picture for its author (never for agents): the solution on the evaluation grid and,
when the case is built, the calibration's error beside it (2-D cases; 3-D cases at mid-height)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from casekit.derive import Derived
from casekit.evaluate.verdicts import grid_mask
from casekit.grid import Grid
from casekit.scoring.artifacts import load_reference, output_names


def _field(arrays: dict[str, np.ndarray], names: list[str]) -> np.ndarray:
    """The output as one scalar field (a vector output by its magnitude)."""
    if len(names) == 1:
        return np.asarray(arrays[names[0]], dtype=float)
    return np.sqrt(sum(np.asarray(arrays[n], dtype=float) ** 2 for n in names))


def _slice(a: np.ndarray) -> np.ndarray:
    return a[a.shape[0] // 2] if a.ndim == 3 else a


def plot_case(derived: Derived, png: Path, build_dir: Path) -> list[str]:
    """Draw the case to ``png``; returns the panels drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spec = derived.case_spec()
    names = output_names(spec)
    mask = grid_mask(spec)
    panels: list[tuple[str, np.ndarray]] = []
    reference = None
    built = sorted(build_dir.glob(f"*/{derived.case_id}/reference.npz")) if build_dir.is_dir() else []
    if built:
        reference = _field(load_reference(built[0], spec), names)
    elif derived.solution is not None:
        from casekit import leak

        grid = Grid.from_spec(spec["eval_grid"])
        values = leak.output_values(leak.evaluate(derived.solution[derived.output.of], grid.points(), derived.t_out,
                                                  derived.dim), derived.output.kind)
        reference = np.asarray(values, dtype=float).reshape(grid.shape)
    if reference is not None:
        panels.append((f"{spec['output']['field']} (reference)", np.where(mask, reference, np.nan)))
    for cal in sorted(build_dir.glob(f"*/{derived.case_id}/calibration.npz")) if build_dir.is_dir() else []:
        if reference is None:
            break
        err = np.abs(_field(load_reference(cal, spec), names) - reference)
        panels.append((f"|calibration - reference| ({cal.parent.parent.name})", np.where(mask, err, np.nan)))
    if not panels:
        raise ValueError("nothing to draw: the case has no manufactured solution and is not built")
    b = spec["eval_grid"].get("bbox") or spec["domain"]["bounds"]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), dpi=110, squeeze=False)
    for ax, (title, data) in zip(axes[0], panels, strict=True):
        im = ax.imshow(_slice(data), origin="lower", extent=(b[0], b[1], b[2], b[3]), cmap="viridis")
        fig.colorbar(im, ax=ax, shrink=0.85)
        ax.set_title(title, fontsize=9)
        ax.set_aspect("equal")
    fig.suptitle(f"{derived.case_id}: {derived.family.title}", fontsize=10)
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, bbox_inches="tight")
    plt.close(fig)
    return [t for t, _ in panels]
