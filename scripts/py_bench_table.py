#!/usr/bin/env python3
"""The Python benchmark's table for BENCHMARKS.md, from a result file of bench/peers.py run
with --peers ndgather,numpy,tf,jax,ort (all timed in one process, back to back).

    python3 scripts/py_bench_table.py bench-results/py-quick.json
"""
import json
import sys

PEERS = ["numpy", "tf", "jax", "ort"]


def fmt(s):
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def main(path):
    out = json.load(open(path))
    print(f"| case | ndgather (Python) | " + " | ".join(PEERS) +
          " | best of NumPy/TF/JAX | ndgather vs best |")
    print("|---" * (len(PEERS) + 4) + "|")
    for e in out["cases"]:
        r = e["results"]
        cell = lambda k: fmt(r[k]["median_s"]) if k in r and "median_s" in r[k] else "n/a"
        ours = r.get("ndgather", {}).get("median_s")
        fresh = {k: r[k]["median_s"] for k in ("numpy", "tf", "jax") if k in r and "median_s" in r[k]}
        best = min(fresh, key=fresh.get) if fresh else None
        ratio = f"{fresh[best] / ours:.2f}× ({best})" if best and ours else "n/a"
        print(f"| {e['name']} | {cell('ndgather')} | " + " | ".join(cell(k) for k in PEERS) +
              f" | {fmt(fresh[best]) if best else 'n/a'} | {ratio} |")


if __name__ == "__main__":
    main(sys.argv[1])
