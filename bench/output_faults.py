"""Page faults per call of one peer's fresh-output gather (bench/LOG.md, "Fresh outputs"):
whether a library's result lands in memory it kept from an earlier call (no faults) or in
fresh pages from the OS (faults, and the kernel's zeroing). One peer per process, so one
library's allocator does not serve another's outputs.

    python bench/output_faults.py tf embed,f64_wide        # peers: numpy, tf, jax, ndgather

Prints, per case: the median time of a call and the minor page faults per call
(`getrusage`, this process), over --calls calls after three warm-up calls.
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("peer", choices=["numpy", "tf", "jax", "ndgather"])
    ap.add_argument("cases", help="comma-separated case names of bench/suite.json")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="use the 'quick' (smaller) sizes")
    args = ap.parse_args()
    suite = json.load(open(os.path.join(HERE, "suite.json")))
    cases = {c["name"]: c for c in suite["cases"]}
    for name in args.cases.split(","):
        case = cases[name]
        p, i, _ = peers.build_inputs(case, case["quick" if args.quick else "full"])
        call = peers.IMPLS[args.peer](case, p, i)[0][3]
        for _ in range(3):
            call()
        times = []
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(args.calls):
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        print(f"{args.peer:<9} {name:<11} {statistics.median(times) * 1e3:8.2f} ms  "
              f"{faults / args.calls:10.0f} minor faults per call", flush=True)


if __name__ == "__main__":
    main()
