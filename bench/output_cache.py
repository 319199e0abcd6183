"""The Python package's fresh results with and without reuse of freed result arrays
(bench/LOG.md, "Changes in issue 13"): for each case (full sizes), ng.gather/gather_nd timed
with ng.set_output_cache_limit(0) and with the default limit, twice each, beside np.take.

    python bench/output_cache.py embed,nd_slices,nd_batch,f64_wide
"""
import json
import os
import statistics
import sys
import time

import ndgather as ng

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402

suite = json.load(open(os.path.join(HERE, "suite.json")))
cases = {c["name"]: c for c in suite["cases"]}


def med(f, n=11):
    f()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


for name in sys.argv[1].split(","):
    c = cases[name]
    p, i, _ = peers.build_inputs(c, c["full"])
    fn = peers.impl_ndgather(c, p, i)[0][3]
    npf = peers.impl_numpy(c, p, i)[0][3]
    res = {}
    for limit in (0, 1 << 30, 0, 1 << 30):
        ng.set_output_cache_limit(limit)
        res.setdefault(limit, []).append(med(fn))
    shown = {k: "/".join(f"{v:.1f}" for v in vs) for k, vs in res.items()}
    print(f"{name:<11} ng.gather ms: no reuse {shown[0]}, reuse {shown[1 << 30]}; "
          f"numpy {med(npf):.1f}", flush=True)
