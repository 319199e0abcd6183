#!/usr/bin/env bash
# Fails if the Rust test build and the Python extension's build resolve different features
# for a crate that the library ndgather is built from: maturin would then compile ndgather
# a second time in scripts/test.sh (see crates/workspace-hack/Cargo.toml, and add what this
# names there).
set -euo pipefail
cd "$(dirname "$0")/.."

# Every crate in a build, with the features that build resolves for it (one line each).
features() {
    cargo tree "$@" --prefix none --no-dedupe -f '{p}|{f}' | sed 's/ (\*)$//' | sort -u
}
tests=$(features --workspace --exclude ndgather-py -e normal,build,dev)
python=$(features -p ndgather-py -e normal,build)

# The crates the library ndgather is built from, in the Python build: those under ndgather
# where it is ndgather-py's dependency.
crates=$(cargo tree -p ndgather-py -e normal,build --prefix depth --no-dedupe -f '{p}' | awk '
    { match($0, /^[0-9]+/); depth = substr($0, 1, RLENGTH) + 0; line = substr($0, RLENGTH + 1) }
    inside && depth <= 1 { inside = 0 }
    depth == 1 && line ~ /^ndgather v/ { inside = 1; next }
    inside { split(line, part, " "); print part[1] " " part[2] }' | sort -u)
if [ -z "$crates" ]; then
    echo "check-features: found no crate under ndgather (has cargo tree's output changed?)" >&2
    exit 1
fi
# The lines of a build's features for those crates.
pick() { awk -F'|' 'NR == FNR { want[$0]; next } $1 in want' <(echo "$crates") <(echo "$1"); }
if ! difference=$(diff <(pick "$tests") <(pick "$python")); then
    echo "check-features: the Rust test build (<) and the Python extension's build (>) resolve" >&2
    echo "different features for crates ndgather is built from; add them to" >&2
    echo "crates/workspace-hack/Cargo.toml:" >&2
    echo "$difference" >&2
    exit 1
fi
echo "check-features: the Rust test build and the Python extension's build resolve the same features for the $(echo "$crates" | wc -l) crates ndgather is built from"
