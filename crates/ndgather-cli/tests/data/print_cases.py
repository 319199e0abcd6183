"""Writes print_cases.jsonl: arrays of every dtype and NumPy's own `str` of each, for
tests/print.rs. Run once with NumPy (the pinned one of requirements-dev.txt):

    .venv/bin/python crates/ndgather-cli/tests/data/print_cases.py
"""
import json
import pathlib

import numpy as np

rng = np.random.default_rng(20261122)
cases = []


def add(a, precision=8, threshold=1000, linewidth=75):
    a = np.asarray(a)
    with np.printoptions(precision=precision, threshold=threshold, linewidth=linewidth):
        text = str(a)
    case = {
        "dtype": a.dtype.str,
        "shape": list(a.shape),
        "precision": precision,
        "threshold": threshold,
        "linewidth": linewidth,
        "str": text,
    }
    if a.dtype.kind == "U":
        case["values"] = [str(v) for v in a.ravel()]
    elif a.dtype.kind == "S":
        case["values"] = [bytes(v).hex() for v in a.ravel()]
    else:
        case["hex"] = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes().hex()
    cases.append(case)


floats = [np.float16, np.float32, np.float64]
specials = [0.0, -0.0, np.nan, np.inf, -np.inf]
for t in floats:
    info = np.finfo(t)
    add(np.array([0.1, 0.2, 0.3], dtype=t))
    add(np.array([1.0, 2.0, -3.0], dtype=t))
    add(np.array([0.1, 1 / 3, 2 / 3, 100.5], dtype=t))
    add(np.array([1e-5, 1.5, 3.0], dtype=t))
    add(np.array([1e-3, 1.0, 999.0], dtype=t))
    add(np.array([1e-3, 1.0, 1001.0], dtype=t))
    add(np.array(specials, dtype=t))
    add(np.array([np.nan, np.inf], dtype=t))
    add(np.array([np.nan, -np.inf, 1.5], dtype=t))
    add(np.array([info.max, info.tiny, info.eps, info.smallest_subnormal], dtype=t))
    add(np.array([info.max, -info.max], dtype=t))
    add(np.array([-info.smallest_subnormal, 0.0], dtype=t))
    for e in [-6, -4, -1, 0, 2, 3, 5, 6, 7, 8, 9, 16, 17]:
        add(np.array([10.0 ** e], dtype=t))
        add(np.array([1.5 * 10.0 ** e, 1.0], dtype=t))
    for scale in [1e-6, 1e-2, 1, 50, 1e4, 1e9]:
        add((rng.standard_normal(7) * scale).astype(t))
    add((rng.standard_normal((3, 4, 5)) * 100).astype(t))
    add(rng.standard_normal((40,)).astype(t))
    add(rng.standard_normal((3, 40)).astype(t), linewidth=120)
    add(rng.standard_normal((2000,)).astype(t))
    add(rng.standard_normal((30, 40)).astype(t))
    add(rng.standard_normal((12, 12, 12)).astype(t))
    add(rng.standard_normal((5,)).astype(t), precision=3)
    add(rng.standard_normal((5,)).astype(t), precision=17)
    add((rng.standard_normal((5,)) * 1e-7).astype(t), precision=2)
    add(rng.standard_normal((20,)).astype(t), threshold=10)
    add(rng.standard_normal((4, 4)).astype(t), threshold=5)
    add(np.array(0.1, dtype=t))
    add(np.array(-2.5, dtype=t))
    for v in [0.0, -0.0, 1.0, 100.0, 1e3, 1e5, 1e6, 1e7, 1e15, 1e16, 1e-4, 9e-5, 1 / 3, np.nan, -np.inf]:
        add(np.array(v, dtype=t))
    # every float16 value, in chunks (as a check of the shortest digits)
    if t is np.float16:
        every = np.arange(0, 1 << 16, dtype=np.uint16).view(np.float16)
        for chunk in np.split(every, 64):
            add(chunk.reshape(32, 32), threshold=2000, linewidth=10**6)

# random bit patterns of float32 and float64, each value alone (so each prints in full) and
# in blocks of 32 (one format for all)
for t, u in [(np.float32, np.uint32), (np.float64, np.uint64)]:
    bits = rng.integers(0, np.iinfo(u).max, size=1024, dtype=u, endpoint=True).view(t)
    for chunk in np.split(bits, 32):
        add(chunk, linewidth=10**6)
    for v in bits[:200]:
        add(np.array(v))

for t in [np.complex64, np.complex128]:
    add(np.array([1 + 2j, 3.5 - 1j], dtype=t))
    add(np.array([0.1 - 0.0j, -0.0 + 0.0j, 1j], dtype=t))
    add(np.array([1e-5 + 1j, 1e5 - 1e-5j], dtype=t))
    add(np.array([complex(np.nan, np.inf), complex(-np.inf, np.nan), 1 + 1j], dtype=t))
    add((rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(t))
    add((rng.standard_normal(2000) + 1j * rng.standard_normal(2000)).astype(t))
    for v in [1.5 + 2j, -0.0 + 1j, 1e20 + 1j, 0.1 - 0.0j, 2j, -1 - 1j, complex(np.nan, np.inf), 0j]:
        add(np.array(v, dtype=t))

ints = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
for t in ints:
    info = np.iinfo(t)
    add(np.array([info.min, 0, info.max], dtype=t))
    add(np.arange(12, dtype=t).reshape(3, 4))
    add(rng.integers(info.min, info.max, size=(4, 30), dtype=t, endpoint=True))
    add(rng.integers(0, 100, size=(1500,), dtype=t))
    add(np.array(info.max, dtype=t))
    add(np.array(info.min, dtype=t))

add(np.array([True, False, True]))
add(np.array([True, True]))
add(np.array([[False], [False]]))
add(rng.integers(0, 2, size=(40, 40)).astype(bool))
add(np.array(True))
add(np.array(False))

add(np.array(["a", "bb", "ccc"]))
add(np.array(["it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\there", "new\nline"]))
add(np.array(["é", "日本語", "\x00nul", "\x7f", "\u00a0nbsp", "emoji 😀"]))
add(np.array([["p0", "p1"], ["p2", "p3"]]))
add(np.array(["w" * 30] * 9))
add(np.array(["x%d" % i for i in range(1200)]))
add(np.array("hello"))
add(np.array([b"a", b"bb", b"it's", b"\x00\xff\n", b'q"'], dtype="S"))
add(np.array(b"bytes"))
add(np.zeros((0,), dtype=np.float32))
add(np.zeros((2, 0), dtype=np.int64))
add(np.zeros((0, 3), dtype="U1"))

out = pathlib.Path(__file__).with_name("print_cases.jsonl")
out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases))
print(f"{len(cases)} cases, numpy {np.__version__}")
