#!/usr/bin/env bash
# The README's test command: all the set-up a fresh machine needs (a local virtual
# environment .venv with pinned packages, the Python extension built into it), then style
# checks, every test (Rust, Python, Java) and the documentation site's build. Needs the Rust
# toolchain, python3 (3.11+, for the pinned test packages) with venv and pip, and Maven.
#
# scripts/test.sh --frameworks also runs the PyTorch and TensorFlow tests (issue 55) in a venv
# of their own, .venv-frameworks (crates/ndgather-py/requirements-frameworks.txt: about 3.5 GB
# with the CUDA libraries PyTorch's wheel needs, so CI's run leaves it out); TensorFlow's op is
# compiled there, so it needs a C++ compiler too.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
frameworks=0
for arg in "$@"; do
    case "$arg" in
        --frameworks) frameworks=1 ;;
        *) echo "usage: scripts/test.sh [--frameworks]" >&2; exit 2 ;;
    esac
done

# Each section's header says when it starts, so that a slow run shows where its time went
# (CI's limit is 20 minutes on 2 cores).
section() {
    echo "== $1 [at ${SECONDS}s]"
    shift
    for line in "$@"; do echo "   $line"; done
}

section "set-up: .venv with crates/ndgather-py/requirements-dev.txt"
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r crates/ndgather-py/requirements-dev.txt \
    -r docs/requirements.txt

# Every build below is in the `ci` profile (Cargo.toml): optimised, with debug assertions
# and overflow checks on.
section "style: cargo fmt, clippy, doc"
cargo fmt --all --check
cargo clippy --workspace --all-targets --profile ci -q -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --profile ci -q
# The two builds below must share ndgather's compiled dependencies (crates/workspace-hack).
bash scripts/check-features.sh

section "Rust tests (the extension crate has none of its own: pytest tests it below)"
cargo test --workspace --exclude ndgather-py --profile ci

section "Python extension into .venv; its wheel into a fresh venv, and pytest against that"
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
    .venv/bin/maturin develop --profile ci -q -m crates/ndgather-py/Cargo.toml
# The artifact a user installs, built from the same compiled code: the suite (tests, and the
# doctests of the installed modules) runs against the installed wheel, not the source tree.
# It is linked by Zig against glibc 2.17 (manylinux2014, the tag pip installs on any Linux
# of the last decade), and maturin checks every symbol against that tag, as auditwheel does.
wheels=target/wheel-test
rm -rf "$wheels"
PATH="$PWD/.venv/bin:$PATH" .venv/bin/maturin build --profile ci -q \
    --zig --compatibility manylinux2014 -m crates/ndgather-py/Cargo.toml -i .venv/bin/python \
    -o "$wheels/dist"
ls "$wheels"/dist/*-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
.venv/bin/python -m venv "$wheels/venv"
"$wheels/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheels"/dist/*.whl \
    -r <(grep -v '^maturin==\|^ziglang==' crates/ndgather-py/requirements-dev.txt)
(cd crates/ndgather-py && "../../$wheels/venv/bin/python" -c \
    "import ndgather; assert 'site-packages' in ndgather.__file__, ndgather.__file__" &&
    "../../$wheels/venv/bin/python" -m pytest -q -p no:cacheprovider ./tests --pyargs ndgather)

section "the wheel on the oldest and newest Pythons the package supports, where pyenv has them"
# Each with the newest NumPy that supports it, pinned.
for version_numpy in 3.9:2.0.2 3.13:2.4.6; do
    version=${version_numpy%:*} numpy=${version_numpy#*:}
    # The newest patch release of that version (not a free-threaded "t" build).
    interpreter=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$version.[0-9]*/bin/python \
        2>/dev/null | grep -v 't/bin/python$' | sort -V | tail -1 || true)
    if [ -z "$interpreter" ]; then
        echo "no Python $version here: its smoke test is not run"
        continue
    fi
    rm -rf "$wheels/py$version"
    PATH="$PWD/.venv/bin:$PATH" .venv/bin/maturin build --profile ci -q \
        --zig --compatibility manylinux2014 -m crates/ndgather-py/Cargo.toml -i "$interpreter" \
        -o "$wheels/py$version/dist"
    "$interpreter" -m venv "$wheels/py$version/venv"
    "$wheels/py$version/venv/bin/python" -m pip install -q --disable-pip-version-check \
        "numpy==$numpy" "$wheels/py$version"/dist/*.whl
    "$wheels/py$version/venv/bin/python" scripts/wheel_smoke.py
done

section "the crates as published: packaged, and built from the packages alone (a dry run)"
# Cargo builds the packages in its dev profile, which has no --profile switch here: without
# debug info or incremental files, that build is a minute quicker and 4 GB smaller. It reads
# the crates.io index, as any build of the workspace does.
CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_DEV_INCREMENTAL=false \
    cargo publish --dry-run --allow-dirty -p ndgather -p ndgather-cli

section "the CLI as a Rust user installs it: cargo install, a working ndgather, under 15 MB"
# The release profile, as users get it; the limit is issue 56's. Built into target/ like any
# release build, so a second run is quick.
cli_root=$(mktemp -d)
trap 'rm -rf "$cli_root"' EXIT
cargo install -q --locked --path crates/ndgather-cli --root "$cli_root"
"$cli_root/bin/ndgather" examples > /dev/null
cli_bytes=$(stat -c %s "$cli_root/bin/ndgather")
echo "release binary: $cli_bytes bytes"
if [ "$cli_bytes" -ge 15000000 ]; then
    echo "the release binary is $cli_bytes bytes, over 15 MB: see BENCHMARKS.md, \"The size of"
    echo "the CLI binary\", for what made it smaller"
    exit 1
fi

section "Java front end: Maven builds the native library (cargo, ci profile) and runs JUnit"
mvn -B --no-transfer-progress -f java/pom.xml -Dcargo.profile=ci test

section "the jar as a user gets it: installed with its sources and Javadoc, then a project of" \
    "its own (examples/java-consumer) that depends on it by its coordinates alone"
mvn -B -q --no-transfer-progress -f java/pom.xml -Dcargo.profile=ci install -DskipTests
consumer=$(mvn -B -q --no-transfer-progress -Dstyle.color=never \
    -f examples/java-consumer/pom.xml compile exec:java) || { echo "$consumer"; exit 1; }
echo "$consumer"
grep -q "first column of users 2 and 0: 4.5 0.5" <<<"$consumer"

section "the documentation site: every page built, no broken link (its examples ran above)," \
    "with the Rust and Java references built above (cargo doc, mvn install) beside it"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

if [ "$frameworks" = 1 ]; then
    section "PyTorch's custom ops (--frameworks): the wheel in .venv-frameworks, with PyTorch," \
        "and the C++ kernel compiled against it"
    [ -x .venv-frameworks/bin/python ] || .venv/bin/python -m venv .venv-frameworks
    .venv-frameworks/bin/python -m pip install -q --disable-pip-version-check \
        -r crates/ndgather-py/requirements-frameworks.txt
    .venv-frameworks/bin/python -m pip install -q --disable-pip-version-check --force-reinstall \
        --no-deps "$wheels"/dist/*.whl
    (cd crates/ndgather-py && NDGATHER_CACHE_DIR="$PWD/../../target/ndgather-cache" \
        ../../.venv-frameworks/bin/python -m pytest -q -p no:cacheprovider \
        tests/test_torch_ops.py tests/test_torch_func.py tests/test_torch_table.py \
        tests/test_dlpack.py)
    section "TensorFlow's custom op (--frameworks): compiled against the installed TensorFlow"
    # Its own process (TensorFlow and PyTorch are not loaded together), and a cache of its own.
    (cd crates/ndgather-py && NDGATHER_CACHE_DIR="$PWD/../../target/ndgather-cache" \
        ../../.venv-frameworks/bin/python -m pytest -q -p no:cacheprovider tests/test_tf_ops.py \
        tests/test_tf_table.py)
fi
section "done"
