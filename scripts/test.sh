#!/usr/bin/env bash
# The README's test command: all the set-up a fresh machine needs (a local virtual
# environment .venv with pinned packages, the Python extension built into it), then style
# checks, every test (Rust, Python, Java) and the documentation site's build. Needs the Rust
# toolchain, python3 (3.11+, for the pinned test packages) with venv and pip, and Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}

echo "== set-up: .venv with crates/ndgather-py/requirements-dev.txt"
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r crates/ndgather-py/requirements-dev.txt \
    -r docs/requirements.txt

# Every build below is in the `ci` profile (Cargo.toml): optimised, with debug assertions
# and overflow checks on.
echo "== style: cargo fmt, clippy, doc"
cargo fmt --all --check
cargo clippy --workspace --all-targets --profile ci -q -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --profile ci -q
# The two builds below must share ndgather's compiled dependencies (crates/workspace-hack).
bash scripts/check-features.sh

echo "== Rust tests (the extension crate has none of its own: pytest tests it below)"
cargo test --workspace --exclude ndgather-py --profile ci

echo "== Python extension into .venv, then pytest (tests and doctests)"
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
    .venv/bin/maturin develop --profile ci -q -m crates/ndgather-py/Cargo.toml
(cd crates/ndgather-py && ../../.venv/bin/python -m pytest -q -p no:cacheprovider)

echo "== the documentation site: every page built, no broken link (its examples ran above)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

echo "== Java front end: Maven builds the native library (cargo, ci profile) and runs JUnit"
mvn -B --no-transfer-progress -f java/pom.xml -Dcargo.profile=ci test
