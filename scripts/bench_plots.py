#!/usr/bin/env python3
"""The performance page's plots, from one run's results (what scripts/bench-vs-peers.sh writes:
ndgather-{quick,full}.json from `ndgather bench --json`, peers-{quick,full}.json from
bench/peers.py):

- ``ratio-SIZE.png``: per case, ndgather's time over the best peer's (below 1: ndgather is
  faster): the Rust harness's fresh output (``alloc``) against the fastest of NumPy,
  TensorFlow and JAX, which allocate theirs too; the Python package against the same; and
  ``into``, a reused output, against ONNX Runtime, which binds one;
- ``gbps-SIZE.png``: per case, the bytes each moved per second (output written twice counts
  as the suite counts it), ndgather's and the best peer's, against memcpy's rate in the
  same run.

    python scripts/bench_plots.py [RESULTS_DIR [OUT_DIR]]    # bench-results, docs/img
"""
from __future__ import annotations

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ALLOCATING = ("numpy", "tf", "jax")
NAMES = {"numpy": "NumPy", "tf": "TensorFlow", "jax": "JAX", "ort": "ONNX Runtime"}


def load(results: str, size: str) -> tuple[dict, dict] | None:
    ours = os.path.join(results, f"ndgather-{size}.json")
    peers = os.path.join(results, f"peers-{size}.json")
    if not (os.path.exists(ours) and os.path.exists(peers)):
        return None
    with open(ours) as f, open(peers) as g:
        return json.load(f), json.load(g)


def rows(ours: dict, peers: dict) -> list[dict]:
    """One row per case both files hold: the medians, and the peers each side is set against."""
    mine = {(c["name"], c["mode"]): c for c in ours["cases"]}
    out = []
    for case in peers["cases"]:
        name = case["name"]
        times = {k: v["median_s"] for k, v in case["results"].items() if "median_s" in v}
        alloc = mine.get((name, "alloc"), {}).get("median_s")
        into = mine.get((name, "into"), {}).get("median_s")
        if alloc is None or into is None:
            continue
        allocating = {k: times[k] for k in ALLOCATING if k in times}
        best = min(allocating, key=allocating.get) if allocating else None
        # Bytes, as the suite counts them: the output written and read, and the indices.
        moved = case.get("bytes_moved") or mine[(name, "into")]["bytes_moved"]
        out.append({"name": name, "alloc": alloc, "into": into, "python": times.get("ndgather"),
                    "best": best, "best_s": allocating.get(best), "ort": times.get("ort"),
                    "moved": moved})
    return out


def best_of(table: list[dict]) -> str:
    """The allocating peers of the run, as the legends name them."""
    present = [NAMES[k] for k in ALLOCATING if any(r["best"] == k for r in table)]
    return "best of " + ", ".join(present) if len(present) > 1 else "".join(present)


def bars(ax, series: list[tuple[str, list]]) -> None:
    """Grouped bars, each group centred on its case's tick; a missing value leaves a gap."""
    width = 0.8 / max(len(series), 1)
    for k, (label, values) in enumerate(series):
        offset = (k - (len(series) - 1) / 2) * width
        xs = [i + offset for i, v in enumerate(values) if v is not None]
        ax.bar(xs, [v for v in values if v is not None], width, label=label)


def legend(ax) -> None:
    ax.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False)


def ratio_plot(table: list[dict], size: str, path: str) -> None:
    fig, ax = plt.subplots(figsize=(10, 4.6), dpi=110)
    names = [r["name"] for r in table]
    peers = best_of(table)
    series = [
        (f"Rust alloc ÷ {peers}", [r["alloc"] / r["best_s"] if r["best_s"] else None
                                  for r in table]),
        (f"Python ÷ {peers}", [r["python"] / r["best_s"] if r["python"] and r["best_s"] else None
                              for r in table]),
        ("Rust into ÷ ONNX Runtime", [r["into"] / r["ort"] if r["ort"] else None for r in table]),
    ]
    bars(ax, [(label, values) for label, values in series if any(v is not None for v in values)])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("time ÷ peer's (log; below 1: ndgather faster)")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_title(f"ndgather against the best peer, {size} sizes")
    legend(ax)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def gbps_plot(table: list[dict], memcpy: float, size: str, path: str) -> None:
    fig, ax = plt.subplots(figsize=(10, 4.6), dpi=110)
    names = [r["name"] for r in table]
    series = [(label, [r["moved"] / r[key] / 1e9 if r[key] else None for r in table])
              for label, key in [("ndgather alloc (a fresh output, as the peers')", "alloc"),
                                 ("ndgather into (a reused output)", "into"),
                                 (best_of(table), "best_s")]]
    bars(ax, series)
    xs = range(len(names))
    ax.axhline(memcpy, color="black", linestyle="--", linewidth=0.8,
               label=f"memcpy, same run ({memcpy:.1f} GB/s)")
    ax.set_ylabel("GB/s moved")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_title(f"Bytes moved per second, {size} sizes")
    legend(ax)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    results = sys.argv[1] if len(sys.argv) > 1 else "bench-results"
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join("docs", "img")
    os.makedirs(out, exist_ok=True)
    drawn = []
    for size in ("quick", "full"):
        loaded = load(results, size)
        if loaded is None:
            continue
        ours, peers = loaded
        table = rows(ours, peers)
        ratio_plot(table, size, os.path.join(out, f"ratio-{size}.png"))
        gbps_plot(table, ours["memcpy_gbps"], size, os.path.join(out, f"gbps-{size}.png"))
        drawn.append(size)
    if not drawn:
        sys.exit(f"no ndgather-SIZE.json with peers-SIZE.json in {results}")
    print(f"plots of the {', '.join(drawn)} sizes in {out}")


if __name__ == "__main__":
    main()
