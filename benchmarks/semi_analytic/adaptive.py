"""Attack A': attack A with the polynomial degree raised until the collocation residual (data only:
PDE + boundary rows) is ~0 or the column budget is hit; re-run on the records attack A missed."""

import glob
import json
import signal
import sys
import time

import colloc2
import harness

MAXCOL = 1400


fam_filter = sys.argv[2].split(",") if len(sys.argv) > 2 else None
rows = {}
for f in glob.glob("colloc_results*.jsonl"):
    with open(f) as lines:
        for line in lines:
            r = json.loads(line)
            rows[r["path"]] = r
with open(sys.argv[1], "a") as fh:
    for path, r in sorted(rows.items()):
        if r.get("ratio") is None or r["ratio"] <= 1:
            continue
        if fam_filter and r["family"] not in fam_filter:
            continue
        c = harness.load(path)
        ref, mask = harness.reference(c)
        best = None
        t = time.time()
        signal.alarm(120)
        try:
            for deg in range(r["info"]["deg"] + 1, 11):
                p = colloc2.Problem(c["spec"], c["family"], deg=deg)
                if p.nd * len(p.blocks) > MAXCOL:
                    break
                info = p.fit()
                e = harness.score(p.view, p.values(), ref, mask)
                cand = (info["resid"], deg, e)
                if best is None or cand[0] < best[0]:
                    best = cand
                if info["resid"] < 1e-8:
                    break
        except harness.Timeout:
            pass
        finally:
            signal.alarm(0)
        if best:
            out = dict(
                path=path,
                id=r["id"],
                family=r["family"],
                method=r["method"],
                tau=r["tau"],
                deg=best[1],
                resid=best[0],
                err=best[2],
                ratio=best[2] / r["tau"],
                before=r["ratio"],
                sec=round(time.time() - t, 1),
            )
            fh.write(json.dumps(out) + "\n")
            fh.flush()
