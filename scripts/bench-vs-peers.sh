#!/usr/bin/env bash
# Measures ndgather against its peers in one session on this machine: physlim.c (memcpy
# bandwidth, C random-gather rate), then for the quick and the full sizes `ndgather bench`
# and bench/peers.py back to back on the same suite (bench/ holds a copy of shared/bench). Writes bench-results/ and prints
# the table of BENCHMARKS.md. The Python package, built from this checkout with .venv's maturin
# (scripts/test.sh makes .venv) and installed into $PYTHON, is timed by peers.py beside the
# peers. Needs: gcc, $PYTHON (python3) with numpy tensorflow-cpu jax onnx onnxruntime (never
# in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${BENCH:-bench}
OUT=${OUT:-bench-results}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
cargo build --release -q -p ndgather-cli
rm -rf "$OUT/wheels"
.venv/bin/maturin build --release -q -m crates/ndgather-py/Cargo.toml -i "$PYTHON" -o "$OUT/wheels"
"$PYTHON" -m pip install -q --force-reinstall --no-deps "$OUT"/wheels/*.whl
gcc -O3 -march=native -fno-tree-loop-distribute-patterns -pthread "$BENCH/physlim.c" -o "$OUT/physlim"
"$OUT/physlim" "$OUT/physlim.json" > "$OUT/physlim.txt"
for size in quick full; do
    flag=()
    [ "$size" = quick ] && flag=(--quick)
    ./target/release/ndgather bench "$BENCH/suite.json" "${flag[@]}" --json "$OUT/ndgather-$size.json" | tee "$OUT/ndgather-$size.txt"
    TF_CPP_MIN_LOG_LEVEL=3 "$PYTHON" "$BENCH/peers.py" "${flag[@]}" --no-variants --peers numpy,tf,jax,ort,ndgather \
        --out "$OUT/peers-$size.json" > "$OUT/peers-$size.txt" 2>&1
done
"$PYTHON" scripts/bench_table.py "$OUT"
