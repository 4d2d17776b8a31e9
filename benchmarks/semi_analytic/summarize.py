import collections
import glob
import json
import sys


def rows(pattern):
    out = {}
    for f in sorted(glob.glob(pattern)):
        with open(f) as lines:
            for line in lines:
                r = json.loads(line)
                out[r["id"] + ("@A" if r.get("authored") else "")] = r
    return list(out.values())


for name, pat in (("A colloc", "colloc_results*.jsonl"), ("B taylor_hi", "taylor_results.jsonl")):
    rs = rows(pat)
    ok = [r for r in rs if r.get("ratio") is not None]
    passed = [r for r in ok if r["ratio"] <= 1]
    near = sorted([r for r in ok if 1 < r["ratio"] < 3], key=lambda r: r["ratio"])
    errs = [r for r in rs if r.get("ratio") is None]
    print(
        f"== {name}: scored {len(ok)} (+{len(errs)} errors/timeouts/n.a.), pass {len(passed)}, "
        f"near-miss(<3) {len(near)}"
    )
    by = collections.defaultdict(lambda: [0, 0, 0])
    for r in ok:
        k = (r["family"], r["method"][:5])
        by[k][0] += 1
        by[k][1] += r["ratio"] <= 1
        by[k][2] += 1 < r["ratio"] < 3
    for k, v in sorted(by.items()):
        print("  ", k, "scored", v[0], "pass", v[1], "near", v[2])
    if "-v" in sys.argv:
        print("  PASS:", " ".join(sorted(r["id"] for r in passed)))
        print("  NEAR:", ", ".join(f"{r['id']} {r['ratio']:.2f}" for r in near))
        print("  ERR:", collections.Counter(str(r.get("error"))[:60] for r in errs).most_common(8))
