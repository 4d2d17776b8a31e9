"""Run attack A (colloc2) on every built record; writes results JSONL. usage: run_colloc.py out.jsonl [deg] [filter]"""

import json
import signal
import sys
import time

import colloc2
import harness

out = sys.argv[1]
deg = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-" else None
filt = sys.argv[3] if len(sys.argv) > 3 else ""
shard, nshard = (int(x) for x in (sys.argv[4] if len(sys.argv) > 4 else "0/1").split("/"))
MAXCOL = 900


done = set()
try:
    with open(out.rsplit(".", 1)[0].split(".shard")[0] + ".jsonl") as lines:
        done.update(json.loads(line)["path"] for line in lines)
except FileNotFoundError:
    pass
with open(out, "a") as fh:
    order = [
        "poisson",
        "helmholtz",
        "heat",
        "convection_diffusion",
        "wave",
        "biharmonic",
        "linear_elasticity",
        "stokes",
        "reaction_diffusion",
        "navier_stokes",
        "burgers",
    ]
    paths = sorted(harness.record_paths(), key=lambda p: order.index(p.split("/")[-2]))
    for idx, path in enumerate(paths):
        if idx % nshard != shard or filt not in path or path in done:
            continue
        c = harness.load(path)
        if not c:
            continue
        row = dict(path=path, id=c["id"], family=c["family"], method=c["method"], tau=c["tau"], authored=c["authored"])
        t = time.time()
        signal.alarm(60)
        try:
            ref, mask = harness.reference(c)
            p = colloc2.Problem(c["spec"], c["family"], deg=deg)
            nb = len(p.blocks)
            while p.nd * nb > MAXCOL and p.deg > 1:
                p = colloc2.Problem(c["spec"], c["family"], deg=p.deg - 1)
            info = p.fit()
            vals = p.values()
            e = harness.score(p.view, vals, ref, mask)
            row.update(err=e, ratio=e / c["tau"], info=info)
        except harness.Timeout:
            row.update(err=None, error="timeout")
        except Exception as exc:
            row.update(err=None, error=f"{type(exc).__name__}: {str(exc)[:200]}")
        finally:
            signal.alarm(0)
        row["sec"] = round(time.time() - t, 2)
        fh.write(json.dumps(row) + "\n")
        fh.flush()
