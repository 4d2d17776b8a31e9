"""How far up the time-Taylor attack reaches on a dataset's committed records (printed, never asserted).

For a transient manufactured case every time derivative of the solution at t0 follows from the agent
view without a solve: the initial data, then ``u_t = f - L(u)``, ``u_tt = f_t - ...`` by applying the
PDE to printed expressions (``casekit.validate.taylor``).  Validation refuses a case whose expansion
of order <= ``TAYLOR_ORDER`` (2) comes within the span gap of the answer at t_end, and the build one
within the span margin x tau_acc.  Higher orders are the Cauchy-Kovalevskaya series of the data -- a
solve by repeated differentiation, which the battery does not call a cheap function of the agent
view; this script measures at which order that series passes each built case:

    python benchmarks/bench_time_taylor.py [--area datasets/pdeagent-bench-repaired/build]
        [--track dolfinx] [--orders 12] [--family heat ...]

It prints, per family, the built manufactured transient cases, how many an expansion of order <= 2
passes (should be none), and the distribution of the first passing order (tau_acc of the record).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from casekit.validate import taylor
from casekit.validate.view import view_of_record


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--area", default="datasets/pdeagent-bench-repaired/build")
    ap.add_argument("--track", default="dolfinx")
    ap.add_argument("--orders", type=int, default=12)
    ap.add_argument("--family", action="append", default=[])
    args = ap.parse_args()
    rows: dict[str, list[int | None]] = defaultdict(list)
    for path in sorted((Path(args.area) / args.track).glob("*/*.json")):
        entry = json.loads(path.read_text())
        if entry.get("status") != "built" or (args.family and entry["family"] not in args.family):
            continue
        record = entry["record"]
        found = taylor.of_view(view_of_record(record), order=args.orders)
        if found is None:
            continue
        tau = float(record["evaluation_metadata"]["thresholds"]["tau_acc"])
        first = next((n for n in range(1, len(found)) if found[n] <= tau), None)
        rows[entry["family"]].append(first)
        print(f"{entry['id']:64s} tau {tau:.2e}  " + " ".join(f"{e:.1e}" for e in found[1:])
              + (f"  passes at order {first}" if first else ""), flush=True)
    print(f"\n{'family':22s} {'cases':>5s} {'<= 2':>5s} {'passed by':>9s} {'median order':>12s}"
          f"   (orders 1..{args.orders})")
    for family, firsts in sorted(rows.items()):
        passed = [n for n in firsts if n is not None]
        low = sum(1 for n in passed if n <= taylor.TAYLOR_ORDER)
        med = f"{statistics.median(passed):g}" if passed else "-"
        print(f"{family:22s} {len(firsts):5d} {low:5d} {len(passed):9d} {med:>12s}")


if __name__ == "__main__":
    main()
