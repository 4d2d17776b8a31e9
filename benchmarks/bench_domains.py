"""Meshing time per domain template at the default size (printed, not asserted)."""

from __future__ import annotations

import time

from casekit.domains import DOMAINS, resolve
from casekit.domains.meshing import MeshOptions, generate


def main() -> None:
    print(f"{'template':18s} {'cell':8s} {'cells':>8s} {'seconds':>8s} {'cells/s':>10s}")
    for name in DOMAINS.names():
        d = resolve(name)
        for cell in ("simplex", "quad"):
            opts = MeshOptions(cells_across=40 if d.dim == 2 else 16, cell=cell)
            generate(d, opts)  # warm-up (imports, first gmsh start)
            t0 = time.perf_counter()
            mesh = generate(d, opts)
            dt = time.perf_counter() - t0
            print(f"{name:18s} {cell:8s} {mesh.num_cells:8d} {dt:8.3f} {mesh.num_cells / dt:10.0f}")


if __name__ == "__main__":
    main()
