"""Pictures of meshes with their boundary tags coloured and labelled (matplotlib, Agg), for
``casekit domain show --png``.  Not part of the solver runtime (``casekit.domains`` is): a
picture's look never changes a build's code key."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.collections import LineCollection, PolyCollection

from casekit.domains.meshing import MeshData
from casekit.domains.template import Domain

COLOURS = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]


#: the drawing's width (inches); a 2-D figure's height follows the domain's aspect ratio
WIDTH = 6.4


def draw(domain: Domain, mesh: MeshData, path: Path, title: str | None = None) -> None:
    """The mesh with its tags, titled above its own axes: a flat domain (the dumbbell) gets a
    figure as flat as it is, with no empty band between the title and the drawing."""
    b = domain.bbox()
    aspect = (b[3] - b[2]) / max(b[1] - b[0], 1e-300) if mesh.dim == 2 else 0.875
    fig = plt.figure(figsize=(WIDTH, min(max(WIDTH * 0.8 * aspect, 2.0), 2.0 * WIDTH)), dpi=110)
    ax = _draw_2d(fig, domain, mesh) if mesh.dim == 2 else _draw_3d(fig, domain, mesh)
    ax.set_title(title or f"{domain.name}: {mesh.num_cells} {mesh.cell_type} cells", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)


def _draw_2d(fig: plt.Figure, domain: Domain, mesh: MeshData) -> plt.Axes:
    ax = fig.add_subplot(1, 1, 1)
    cells = mesh.corner_cells()
    polys = mesh.points[cells]
    ax.add_collection(PolyCollection(polys, facecolors="#f4f4f4", edgecolors="#9a9a9a", linewidths=0.3))
    for i, (tag, facets) in enumerate(mesh.facets.items()):
        segs = mesh.points[facets[:, :2]]
        colour = COLOURS[i % len(COLOURS)]
        ax.add_collection(LineCollection(segs, colors=[colour], linewidths=2.2, label=tag))
        mid = segs[len(segs) // 2].mean(axis=0)
        ax.annotate(tag, mid, color=colour, fontsize=8, ha="center", va="center",
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": colour, "lw": 0.6, "alpha": 0.85})
    b = domain.bbox()
    pad = 0.04 * max(b[1] - b[0], b[3] - b[2])
    ax.set_xlim(b[0] - pad, b[1] + pad)
    ax.set_ylim(b[2] - pad, b[3] + pad)
    ax.set_aspect("equal")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.tick_params(labelsize=7)
    return ax


def _draw_3d(fig: plt.Figure, domain: Domain, mesh: MeshData) -> plt.Axes:
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    ax = fig.add_subplot(1, 1, 1, projection="3d")
    for i, (tag, facets) in enumerate(mesh.facets.items()):
        k = 4 if mesh.facet_type.startswith("quad") else 3
        colour = COLOURS[i % len(COLOURS)]
        ax.add_collection3d(Poly3DCollection(mesh.points[facets[:, :k]], facecolors=colour, edgecolors="#333333",
                                             linewidths=0.2, alpha=0.55, label=tag))
    b = domain.bbox()
    ax.set_xlim(b[0], b[1])
    ax.set_ylim(b[2], b[3])
    ax.set_zlim(b[4], b[5])
    ax.set_box_aspect((b[1] - b[0], b[3] - b[2], b[5] - b[4]))
    ax.view_init(elev=22, azim=-55)
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[i % len(COLOURS)], alpha=0.6)
               for i in range(len(mesh.facets))]
    ax.legend(handles, list(mesh.facets), loc="upper left", fontsize=8, frameon=False)
    ax.tick_params(labelsize=7)
    return ax

