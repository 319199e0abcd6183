#!/usr/bin/env bash
# Old against new (issue 54, "Behaviour does not change"): builds the CLI and the Python
# extension in release mode at revision OLD (a git worktree) and at the working tree, then
# runs `ndgather bench --quick`, bench/tiny_call.py, bench/scatter.py and bench/ragged.py on
# each side, alternating, the order swapped each round. Every side runs the working tree's
# scripts with its own build; the logs go to $AB_DIR/{old,new}-ROUND-*.log.
#
#   bash bench/ab.sh OLD_REV [ROUNDS]      e.g. bash bench/ab.sh 171a4b5 3
#   AB_REUSE_OLD=1 bash bench/ab.sh 171a4b5 2   (the old side as built by an earlier run)
#
# Needs .venv (scripts/test.sh makes it) for NumPy and maturin. Peers the scripts compare
# with are left out where they are not installed; only the ratios of old to new count.
set -euo pipefail
cd "$(dirname "$0")/.."
old_rev=${1:?an old revision}
rounds=${2:-3}
dir=${AB_DIR:-/tmp/ndgather-ab}
mkdir -p "$dir"
root=$PWD
py=$root/.venv/bin/python

build() { # build SIDE SOURCE_DIR
    local side=$1 src=$2
    (cd "$src" && CARGO_TARGET_DIR="$dir/target-$side" cargo build -q --release -p ndgather-cli)
    rm -rf "$dir/$side-wheel" "$dir/$side-py"
    (cd "$src" && CARGO_TARGET_DIR="$dir/target-$side" "$root/.venv/bin/maturin" build -q \
        --release -i "$py" -m crates/ndgather-py/Cargo.toml -o "$dir/$side-wheel")
    "$py" -m zipfile -e "$dir/$side-wheel"/*.whl "$dir/$side-py"
}

# AB_REUSE_OLD=1 keeps the old side's builds from an earlier run of the same OLD_REV.
if [ "${AB_REUSE_OLD:-0}" = 1 ] && [ -x "$dir/target-old/release/ndgather" ] && [ -d "$dir/old-py" ]; then
    echo "reusing the old build in $dir"
else
    [ -d "$dir/old-src" ] || git worktree add -f --detach "$dir/old-src" "$old_rev"
    build old "$dir/old-src"
fi
build new "$PWD"

run() { # run SIDE ROUND
    local side=$1 round=$2 out="$dir/$1-$2"
    "$dir/target-$side/release/ndgather" bench --quick bench/suite.json > "$out-bench.log" 2>&1
    for script in tiny_call door_calls scatter ragged; do
        PYTHONPATH="$dir/$side-py" "$py" "bench/$script.py" > "$out-$script.log" 2>&1
    done
}

for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
    for side in $order; do
        echo "round $round: $side"
        run "$side" "$round"
    done
done
echo "logs in $dir"
