"""How much of a timed run is just-in-time compilation (printed, never asserted).

Every evaluated run starts from a fresh state (no JIT cache survives a run), so form compilation
(FFCx for DOLFINx, TSFC/PyOP2 for Firedrake) happens inside every timed run -- the calibration's
and the submissions' alike.  This prints, per built case, the calibration solver's time in a
fresh process with an empty cache (what the runtime gate measures) and again with the cache the
first run left (what a persistent cache would have measured), and the share that is compilation.
casekit's own trusted code only, run directly (no sandbox).

    python benchmarks/bench_jit_share.py BUILD_DIR [--track dolfinx]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from casekit.evaluate.baselines import calibration_settings
from casekit.evaluate.store import open_store
from casekit.tracks import TRACKS

HARNESS = Path(__file__).resolve().parent.parent / "casekit" / "runner" / "harness_python.py"


def timed(python: Path, work: Path, home: Path, preload: str) -> float:
    r_fd, w_fd = os.pipe()
    env = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(home), "CASEKIT_TIMING_FD": str(w_fd),
           "CASEKIT_PRELOAD": preload, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([str(python), str(HARNESS)], cwd=work, env=env, pass_fds=(w_fd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(w_fd)
    os.read(r_fd, 1)
    start = time.monotonic()
    _, err = proc.communicate()
    end = time.monotonic()
    os.close(r_fd)
    if proc.returncode != 0:
        raise RuntimeError(err.decode()[-2000:])
    return end - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--track", default="dolfinx")
    args = ap.parse_args()
    track = TRACKS.get(args.track)
    store = open_store(args.build_dir, args.track)
    print(f"{'case':<60s} {'fresh [s]':>9s} {'cached [s]':>10s} {'JIT share':>9s}")
    shares = []
    for cid, record in sorted(store.records.items()):
        files = track.calibration_files(calibration_settings(record), record["case_spec"])
        with tempfile.TemporaryDirectory() as tmp:
            work, home = Path(tmp) / "w", Path(tmp) / "h"
            work.mkdir()
            home.mkdir()
            for name, data in files.items():
                (work / name).write_bytes(data)
            (work / "case_spec.json").write_text(json.dumps(record["case_spec"]))
            preload = ",".join(getattr(track, "preload", ()))
            fresh = timed(track.python(), work, home, preload)  # type: ignore[attr-defined]
            cached = min(timed(track.python(), work, home, preload) for _ in range(2))  # type: ignore[attr-defined]
        shares.append(1 - cached / fresh)
        print(f"{cid:<60s} {fresh:9.2f} {cached:10.2f} {100 * (1 - cached / fresh):8.0f}%")
    if shares:
        shares.sort()
        print(f"JIT share of the fresh-state runtime: median {100 * shares[len(shares) // 2]:.0f}%, "
              f"range {100 * shares[0]:.0f}-{100 * shares[-1]:.0f}% over {len(shares)} cases")


if __name__ == "__main__":
    main()
