#!/usr/bin/env python3
"""Builds BENCHMARKS.md's tables from one session's results (see bench-vs-peers.sh):
ndgather-{quick,full}.json (`ndgather bench --json`), peers-{quick,full}.json (peers.py) and
physlim.json. Ratios are time(ndgather) / time(peer): below 1 means ndgather is faster. The
targets (issue 13) hold with a 10% margin: alloc <= 0.9 x best(NumPy, TF, JAX), alloc <=
TF / (1.5 x 1.1), into <= 0.9 x ORT. "Python" is the package's ng.gather / ng.gather_nd /
ng.take_along_axis, timed by peers.py beside the peers (a fresh array per call)."""
import json
import math
import os
import sys

PEERS = [("numpy", "NumPy"), ("tf", "TF"), ("jax", "JAX"), ("ort", "ORT")]
MARGIN = 1.1
BANDWIDTH = ["embed", "nd_slices", "nd_batch", "f64_wide"]
LATENCY = ["elems_1d", "rows_small", "nd_elems"]


def t(s):
    if s is None:
        return "–"
    return f"{s * 1e6:.2f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def r(a, b):
    return "–" if a is None or b is None else f"{a / b:.2f}"


def mark(ok):
    return "–" if ok is None else ("✓" if ok else "✗")


def table(out_dir, size, phys):
    ours = json.load(open(os.path.join(out_dir, f"ndgather-{size}.json")))
    peers = json.load(open(os.path.join(out_dir, f"peers-{size}.json")))
    mine = {(c["name"], c["mode"]): c for c in ours["cases"]}
    memcpy = ours["memcpy_gbps"]
    c_rate = phys.get("gather40MB_Mps_4k_2t")
    lines = [f"### {size} sizes (memcpy measured in the same run: {memcpy:.1f} GB/s; "
             f"C random gather, 2 threads: {c_rate:.0f} M elem/s with 4 KiB pages, "
             f"{phys.get('gather40MB_Mps_thp_2t', float('nan')):.0f} M elem/s with 2 MiB pages)", "",
             "| case | ndgather alloc | ndgather into | Python alloc | NumPy | TF | JAX | ORT | alloc/NumPy | alloc/TF | alloc/JAX | alloc/ORT | into/NumPy | into/TF | into/JAX | into/ORT | Python/best(NumPy,TF,JAX) | alloc ≤ best/1.1 | alloc ≤ TF/1.65 | into ≤ ORT/1.1 | share of memcpy (into) | share of C gather rate (into) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for case in peers["cases"]:
        name = case["name"]
        a = mine.get((name, "alloc"), {}).get("median_s")
        i = mine.get((name, "into"), {}).get("median_s")
        pt = {k: case["results"].get(k, {}).get("median_s") for k, _ in PEERS}
        allocating = [pt[k] for k in ("numpy", "tf", "jax") if pt[k] is not None]
        py = case["results"].get("ndgather", {}).get("median_s")
        ok_best = None if a is None or not allocating else a * MARGIN <= min(allocating)
        ok_tf = None if a is None or pt["tf"] is None else a * MARGIN <= pt["tf"] / 1.5
        ok_ort = None if i is None or pt["ort"] is None else i * MARGIN <= pt["ort"]
        share = "–"
        if name in BANDWIDTH and i:
            share = f"{100 * mine[(name, 'into')]['gbps'] / memcpy:.0f}%"
        crate = "–"
        if name in LATENCY and i and c_rate:
            shape = case["indices_shape"]
            items = math.prod(shape if case["op"] == "gather" else shape[:-1])
            crate = f"{100 * items / i / 1e6 / c_rate:.0f}%"
        cells = [name, t(a), t(i), t(py)] + [t(pt[k]) for k, _ in PEERS]
        cells += [r(a, pt[k]) for k, _ in PEERS] + [r(i, pt[k]) for k, _ in PEERS]
        cells += [r(py, min(allocating) if allocating else None)]
        cells += [mark(ok_best), mark(ok_tf), mark(ok_ort), share, crate]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "bench-results"
    phys = json.load(open(os.path.join(out_dir, "physlim.json")))
    for size in ("quick", "full"):
        if os.path.exists(os.path.join(out_dir, f"peers-{size}.json")):
            print(table(out_dir, size, phys))
            print()


if __name__ == "__main__":
    main()
