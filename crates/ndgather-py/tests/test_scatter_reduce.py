"""ng.scatter_reduce against PyTorch's own results and ng.put_along_axis against NumPy's (the
core's case file, made by crates/ndgather/tests/data/along_scatter_cases.py), bit for bit,
out of place and in place; PyTorch's exception classes and messages."""
import itertools
import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import ndgather as ng

CASES = json.loads((pathlib.Path(__file__).parents[2] / "ndgather" / "tests" / "data"
                    / "along_scatter_cases.json").read_text())["cases"]
REDUCE = [k for k, c in enumerate(CASES) if c["op"] == "scatter_reduce"]
PUT = [k for k, c in enumerate(CASES) if c["op"] == "put_along_axis"]
ERRORS = {"RuntimeError": RuntimeError, "IndexError": IndexError,
          "NotImplementedError": NotImplementedError, "ValueError": ValueError,
          "AxisError": np.exceptions.AxisError}


def array(v):
    dtype = ml_dtypes.bfloat16 if v["dtype"] == "bfloat16" else np.dtype(v["dtype"])
    return np.frombuffer(bytes.fromhex(v["hex"]), dtype=np.dtype(dtype).newbyteorder("<")) \
        .astype(dtype).reshape(v["shape"])


def same(a, b):
    """Bit for bit; for float16 and bfloat16, a NaN matches any NaN (PyTorch's half-type
    kernel writes NaN payloads by code path, ops/scatter_reduce.rs says why)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype in (np.float16, np.dtype(ml_dtypes.bfloat16)):
        nan = np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32))
        return a.view(np.uint16)[~nan].tobytes() == b.view(np.uint16)[~nan].tobytes()
    return a.tobytes() == b.tobytes()


def reference(inp, dim, index, src, reduce, include_self):
    """One position of index at a time, in the dtype's wrapping arithmetic: for the
    integer dtypes PyTorch has no kernel for."""
    out = np.array(inp, copy=True).reshape(inp.shape or (1,))
    index, src = index.reshape(index.shape or (1,)), src.reshape(src.shape or (1,))
    dim %= out.ndim
    count = np.full(out.shape, int(include_self), np.int64)
    positions = list(itertools.product(*(range(d) for d in index.shape)))
    info = np.iinfo(out.dtype)
    start = {"sum": 0, "mean": 0, "prod": 1, "amax": info.min, "amin": info.max}[reduce]
    with np.errstate(over="ignore"):
        for p in positions:
            t = p[:dim] + (int(index[p]),) + p[dim + 1:]
            if not include_self:
                out[t] = start
        for p in positions:
            t = p[:dim] + (int(index[p]),) + p[dim + 1:]
            a, v = out[t], src[p]
            out[t] = {"sum": lambda: a + v, "mean": lambda: a + v, "prod": lambda: a * v,
                      "amax": lambda: max(a, v), "amin": lambda: min(a, v)}[reduce]()
            count[t] += 1
    if reduce == "mean":
        out = (out // np.maximum(count, 1).astype(out.dtype)).astype(out.dtype)
    return out.reshape(inp.shape)


@pytest.mark.parametrize("k", REDUCE)
def test_pytorch_case(k):
    case = CASES[k]
    inp, index, src = (array(case[n]) for n in ("input", "index", "src"))
    args = (case["dim"], index, src, case["reduce"])
    kw = {"include_self": case["include_self"]}
    if "output" in case:
        expected = array(case["output"])
        assert same(ng.scatter_reduce(inp, *args, **kw), expected)
        target = inp.copy()
        assert ng.scatter_reduce(target, *args, **kw, out=target) is target
        assert same(target, expected)
        return
    message = case["error"]["message"]
    if "Expected dtype int32/int64" in message and index.dtype.kind in "iu":
        # ndgather takes every integer dtype of indices.
        expected = ng.scatter_reduce(inp, case["dim"], index.astype(np.int64), src,
                                     case["reduce"], **kw)
        assert same(ng.scatter_reduce(inp, *args, **kw), expected)
        return
    if "not implemented for 'UInt" in message:
        # Nor does PyTorch's CPU kernel take the wide unsigned types in most reductions.
        expected = reference(inp, *args, **kw)
        assert same(ng.scatter_reduce(inp, *args, **kw), expected)
        return
    target = inp.copy()
    with pytest.raises(ERRORS[case["error"]["class"]]) as e:
        ng.scatter_reduce(target, *args, **kw, out=target)
    if case["error"]["class"] != "NotImplementedError":
        assert str(e.value) == message
    assert same(target, inp), "written on error"


@pytest.mark.parametrize("k", PUT)
def test_numpy_put_along_axis_case(k):
    case = CASES[k]
    arr, indices, values = (array(case[n]) for n in ("arr", "indices", "values"))
    target = arr.copy()
    if k % 3 == 0:  # a strided view of a larger array
        big = np.zeros([d * 2 for d in arr.shape], arr.dtype)
        target = big[tuple(slice(None, None, 2) for _ in arr.shape)]
        target[...] = arr
    if "output" in case:
        assert ng.put_along_axis(target, indices, values, case["axis"]) is None
        assert same(target, array(case["output"]))
        return
    with pytest.raises(ERRORS[case["error"]["class"]]):
        ng.put_along_axis(target, indices, values, case["axis"])
    assert same(target, arr), "written on error"


def test_cases_cover_the_file():
    assert len(REDUCE) > 900 and len(PUT) > 150


def test_a_jax_array_comes_back_as_one():
    jnp = pytest.importorskip("jax.numpy")
    got = ng.scatter_reduce(jnp.arange(4.0), 0, jnp.array([0, 0, 3]), jnp.ones(3), "sum")
    assert type(got).__module__.startswith(("jax", "jaxlib"))
    assert np.asarray(got).tolist() == [2.0, 1.0, 2.0, 4.0]


def test_against_pytorch_itself_where_it_installs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    for reduce, include_self in itertools.product(["sum", "prod", "mean", "amax", "amin"],
                                                  [True, False]):
        inp = torch.from_numpy(rng.standard_normal((5, 6)).astype(np.float32))
        index = torch.from_numpy(rng.integers(0, 5, (9, 6)))
        src = torch.from_numpy(rng.standard_normal((9, 7)).astype(np.float32))
        want = inp.scatter_reduce(0, index, src, reduce, include_self=include_self)
        got = ng.scatter_reduce(inp, 0, index, src, reduce, include_self=include_self)
        assert isinstance(got, torch.Tensor) and torch.equal(got, want)
        target = inp.clone()
        ng.scatter_reduce(target, 0, index, src, reduce, include_self=include_self, out=target)
        inp.scatter_reduce_(0, index, src, reduce, include_self=include_self)
        assert torch.equal(target, inp)


def test_in_place_on_a_memmap(tmp_path):
    path = tmp_path / "t.npy"
    np.save(path, np.zeros(5, np.int64))
    table = np.load(path, mmap_mode="r+")
    ng.scatter_reduce(table, 0, [1, 1, 4], np.array([3, 4, 5]), "amax", out=table)
    table.flush()
    assert np.load(path).tolist() == [0, 4, 0, 0, 5]


def test_bad_arguments():
    a = np.zeros(3)
    with pytest.raises(RuntimeError, match="reduce argument must be either"):
        ng.scatter_reduce(a, 0, [0], np.ones(1), "add")
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        ng.scatter_reduce(a, 0, np.array([0.0]), np.ones(1), "sum")
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        ng.scatter_reduce(a, 0, [0, 3], np.ones(2), "sum")
    # A dim that is no integer is a TypeError, as in PyTorch.
    with pytest.raises(TypeError, match='attribute "dim" expected an integer, got 0.5'):
        ng.scatter_reduce(a, 0.5, [0], np.ones(1), "sum")
    assert ng.scatter_reduce(a, 0, [0, 3], np.ones(2), "sum", bad_indices="ignore").tolist() \
        == [1.0, 0.0, 0.0]
    assert ng.scatter_reduce(a, 0, [-1], np.ones(1), "sum", bad_indices="negative").tolist() \
        == [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="shares memory"):
        ng.scatter_reduce(a, 0, [0], a[:1], "sum", out=a)
