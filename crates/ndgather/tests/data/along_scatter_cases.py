"""Writes along_scatter_cases.json: PyTorch's own results for torch.scatter_reduce ("sum",
"prod", "mean", "amax", "amin", with and without include_self; every dtype PyTorch's CPU
kernel takes; duplicate indices, NaNs, wrapping integers, negative integer means) and its
errors (class and message), its autograd gradients of input and src (every float dtype; it
differentiates no complex one; ties, zeros in products, duplicates), and NumPy's own results for numpy.put_along_axis (random shapes,
axes, broadcasting, repeated and negative indices) and its errors. For
tests/along_scatter.rs and the Python package's tests. Run once where PyTorch is installed
(not in CI):

    python crates/ndgather/tests/data/along_scatter_cases.py

Arrays are {"dtype", "shape", "hex"}: the little-endian bytes of the C-ordered array (so NaNs
and every bit survive).
"""
import json
import pathlib

import numpy as np
import torch

rng = np.random.default_rng(20261127)
TORCH_DTYPES = {
    "bool": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "uint8": torch.uint8, "uint16": torch.uint16,
    "uint32": torch.uint32, "uint64": torch.uint64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
    "complex64": torch.complex64, "complex128": torch.complex128,
}
NAMES = {v: k for k, v in TORCH_DTYPES.items()}
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def arr(a):
    """A NumPy array or a torch tensor as the file's array."""
    if isinstance(a, torch.Tensor):
        t = a.detach().contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        return {"dtype": NAMES[t.dtype], "shape": list(t.shape), "hex": raw.hex()}
    a = np.asarray(a).copy(order="C")
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "hex": a.astype(a.dtype.newbyteorder("<")).tobytes().hex()}


def values(dtype, shape, nan=False, small=False):
    """Random values of a torch dtype: integers over their whole range (or small ones, for
    products and means), floats with a NaN now and then."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return torch.from_numpy(rng.integers(0, 2, n).astype(bool)).reshape(shape)
    tdt = TORCH_DTYPES[dtype]
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(np.dtype(dtype))
        lo, hi = (max(info.min, -9), min(info.max, 9)) if small else (info.min, info.max)
        v = rng.integers(lo, int(hi) + 1, n, dtype=np.int64 if info.min < 0 else np.uint64)
        return torch.from_numpy(v.astype(dtype)).reshape(shape)
    scale = 3.0 if small else 100.0
    if dtype.startswith("complex"):
        v = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * scale
        return torch.from_numpy(v).to(tdt).reshape(shape)
    v = rng.standard_normal(n) * scale
    if nan and n > 0:
        v[rng.integers(0, n, max(1, n // 4))] = np.nan
    return torch.from_numpy(v).to(tdt).reshape(shape)


def outcome(case, f):
    """The case with PyTorch's (or NumPy's) output, or its error's class and message."""
    try:
        case["output"] = arr(f())
    except Exception as e:  # noqa: BLE001 - every class is recorded
        case["error"] = {"class": type(e).__name__, "message": str(e).split("\n")[0]}
    return case


def reduce_case(inp, dim, index, src, reduce, include_self=True):
    case = {"op": "scatter_reduce", "input": arr(inp), "dim": dim, "index": arr(index),
            "src": arr(src), "reduce": reduce, "include_self": include_self}
    return outcome(case, lambda: inp.scatter_reduce(dim, index, src, reduce,
                                                    include_self=include_self))


def random_shapes():
    """Shapes of input, index and src as scatter_reduce allows them: index no larger than
    input apart from `dim` and no larger than src."""
    ndim = int(rng.integers(0, 4))
    shape = [int(d) for d in rng.integers(1, 5, ndim)]
    dims = max(ndim, 1)
    dim = int(rng.integers(-dims, dims))
    full = shape if ndim else [1]
    ishape = [int(rng.integers(1, d + 1)) for d in full]
    ishape[dim] = int(rng.integers(1, 7))
    sshape = [d + int(rng.integers(0, 2)) for d in ishape]
    if ndim == 0 and rng.random() < 0.5:
        ishape, sshape = [], []
    return shape, dim, ishape, sshape, full[dim]


cases = []
# Every dtype with every reduction, both ways of include_self.
for dtype in TORCH_DTYPES:
    for reduce in REDUCES:
        for include_self in (True, False):
            for _ in range(6):
                shape, dim, ishape, sshape, n = random_shapes()
                small = reduce in ("prod", "mean") or rng.random() < 0.3
                inp = values(dtype, shape, nan=rng.random() < 0.3, small=small)
                index = torch.from_numpy(rng.integers(0, n, ishape))
                src = values(dtype, sshape, nan=rng.random() < 0.3, small=small)
                cases.append(reduce_case(inp, dim, index, src, reduce, include_self))
# Many duplicates into few places: the order of accumulation shows in float bits.
for dtype in ("float16", "bfloat16", "float32", "float64", "complex64"):
    for reduce in ("sum", "prod", "mean"):
        for include_self in (True, False):
            inp = values(dtype, [3, 2], small=True)
            index = torch.from_numpy(rng.integers(0, 3, [40, 2]))
            src = values(dtype, [40, 2], small=True)
            cases.append(reduce_case(inp, 0, index, src, reduce, include_self))
# Counts past what bfloat16 holds exactly: PyTorch counts in the dtype.
for dtype in ("bfloat16", "float16"):
    inp = values(dtype, [2], small=True)
    index = torch.zeros(300, dtype=torch.int64)
    cases.append(reduce_case(inp, 0, index, values(dtype, [300], small=True), "mean"))
# int32 indices; an empty index; signed zeros; a src of higher rank than the input.
cases.append(reduce_case(values("float32", [4]), 0, torch.tensor([1, 1, 3], dtype=torch.int32),
                         values("float32", [3]), "sum"))
cases.append(reduce_case(values("float32", [2, 3]), 0, torch.zeros(0, 5, dtype=torch.int64),
                         values("float32", [1, 1]), "sum"))
cases.append(reduce_case(values("float32", [2, 3]), 1, torch.zeros(2, 0, dtype=torch.int64),
                         values("float32", [2, 2]), "amax", False))
cases.append(reduce_case(torch.tensor([-0.0, 1.0]), 0, torch.tensor([0, 0]),
                         torch.tensor([-0.0, -0.0]), "sum", False))
cases.append(reduce_case(torch.tensor([-0.0, 1.0]), 0, torch.tensor([0, 0]),
                         torch.tensor([-0.0, -0.0]), "sum", True))
cases.append(reduce_case(values("float32", [3]), 0, torch.tensor([2, 0]),
                         values("float32", [2, 4]), "sum"))
# Errors: each with one thing wrong.
f = values("float32", [2, 3])
errs = [
    (f, 0, torch.tensor([[0, 1, 1]]), values("float32", [1, 3]), "max"),
    (f, 0, torch.tensor([[0, 1, 1]]), values("float32", [1, 3]), "foo"),
    (f, 2, torch.tensor([[0, 1, 1]]), values("float32", [1, 3]), "sum"),
    (f, -3, torch.tensor([[0, 1, 1]]), values("float32", [1, 3]), "sum"),
    (f, 0, torch.tensor([[0, 1, 1]]), values("float32", [1, 3, 2]), "sum"),
    (f, 0, torch.tensor([0, 1, 2]), values("float32", [3]), "sum"),
    (f, 0, torch.tensor([[[0]]]), values("float32", [1, 1, 1]), "sum"),
    (f, 0, torch.tensor([[0, 1, 1, 0]]), values("float32", [1, 4]), "sum"),
    (f, 1, torch.tensor([[0], [1], [0]]), values("float32", [3, 1]), "sum"),
    (f, 0, torch.tensor([[0, 1, 1]]), values("float32", [1, 2]), "sum"),
    (f, 0, torch.tensor([[0, 1, 1], [1, 1, 0], [0, 0, 0]]), values("float32", [2, 3]), "sum"),
    (f, 0, torch.tensor([[0, 1, 2]]), values("float32", [3]), "sum"),
    (f, 0, torch.tensor([[0, 1, 2]]), values("float64", [1, 3]), "sum"),
    (f, 0, torch.tensor([[0.0, 1.0, 1.0]]), values("float32", [1, 3]), "sum"),
    (f, 0, torch.tensor([[0, 1, 1]], dtype=torch.int16), values("float32", [1, 3]), "sum"),
    (f, 1, torch.tensor([[0, 1, 3]]), values("float32", [1, 3]), "sum"),
    (f, 1, torch.tensor([[0, -1, 2]]), values("float32", [1, 3]), "amin"),
    (f, -1, torch.tensor([[0, 1], [7, 2]]), values("float32", [2, 2]), "mean"),
    (values("bool", [3]), 0, torch.tensor([0]), values("bool", [1]), "mean"),
    (values("complex64", [3]), 0, torch.tensor([0]), values("complex64", [1]), "amax"),
    (values("complex128", [3]), 0, torch.tensor([0]), values("complex128", [1]), "amin"),
]
for inp, dim, index, src, reduce in errs:
    for include_self in (True, False):
        cases.append(reduce_case(inp, dim, index, src, reduce, include_self))

# numpy.put_along_axis: random shapes, axes, broadcasting, repeated and negative indices.
PUT_DTYPES = ["float32", "float64", "int8", "uint64", "float16", "complex128", "bool"]


def put_case(a, indices, vals, axis):
    case = {"op": "put_along_axis", "arr": arr(a), "indices": arr(indices), "values": arr(vals),
            "axis": axis}

    def put():
        out = a.copy()
        np.put_along_axis(out, indices, vals, axis)
        return out
    return outcome(case, put)


for k in range(150):
    ndim = int(rng.integers(1, 4))
    shape = [int(d) for d in rng.integers(1, 5, ndim)]
    axis = int(rng.integers(-ndim, ndim))
    ishape = [d if rng.random() < 0.7 else 1 for d in shape]
    ishape[axis] = int(rng.integers(0, 6))
    n = shape[axis]
    indices = rng.integers(-n, n, ishape)
    result = [1 if j == axis % ndim else d for j, d in enumerate(shape)]
    result = list(np.broadcast_shapes(tuple(result), tuple(ishape)))
    result[axis] = ishape[axis]
    vshape = [d if rng.random() < 0.7 else 1 for d in result]
    dtype = PUT_DTYPES[k % len(PUT_DTYPES)]
    a = rng.integers(0, 100, shape).astype(dtype)
    cases.append(put_case(a, indices, rng.integers(0, 100, vshape).astype(dtype), axis))
a = np.arange(12.0).reshape(3, 4)
cases.append(put_case(a, np.array([[0], [4], [1]]), np.array([-1.0]), 1))
cases.append(put_case(a, np.array([[0], [-5], [1]]), np.array([-1.0]), 1))
cases.append(put_case(a, np.array([0, 1]), np.array([-1.0]), 1))
cases.append(put_case(a, np.array([[0, 1]]), np.array([-1.0, -2.0, -3.0]), 1))
cases.append(put_case(a, np.array([[0, 1]]), np.array([-1.0]), 2))


# Gradients through autograd (drawn last, so the cases above keep their values).
def grad_case(inp, dim, index, src, reduce, include_self):
    inp, src = inp.clone().requires_grad_(True), src.clone().requires_grad_(True)
    out = inp.scatter_reduce(dim, index, src, reduce, include_self=include_self)
    upstream = values(NAMES[out.dtype], list(out.shape), small=True)
    d_input, d_src = torch.autograd.grad(out, [inp, src], upstream)
    return {"op": "scatter_reduce_grad", "input": arr(inp), "dim": dim, "index": arr(index),
            "src": arr(src), "reduce": reduce, "include_self": include_self,
            "upstream": arr(upstream), "d_input": arr(d_input), "d_src": arr(d_src)}


def tied(dtype, shape):
    """Values from a few, so that maxima, minima and zeros repeat."""
    pick = rng.integers(0, 4, int(np.prod(shape)))
    v = np.array([0.0, 1.5, -2.0, 3.0])[pick]
    return torch.from_numpy(v).to(TORCH_DTYPES[dtype]).reshape(shape)


# (PyTorch differentiates no complex scatter_reduce.)
for dtype in ("float16", "bfloat16", "float32", "float64"):
    for reduce in REDUCES:
        for include_self in (True, False):
            for k in range(4):
                # src of index's shape: PyTorch's backward fails on a larger one (its src
                # gradient has index's shape).
                shape, dim, ishape, _, n = random_shapes()
                index = torch.from_numpy(rng.integers(0, n, ishape))
                make = tied if k % 2 else (lambda d, s: values(d, s, small=True))
                cases.append(grad_case(make(dtype, shape), dim, index, make(dtype, ishape),
                                       reduce, include_self))
# Products with one zero and with two zeros meeting on one element.
for zeros in ([0.0, 2.0, 3.0], [0.0, 0.0, 3.0]):
    for include_self in (True, False):
        cases.append(grad_case(torch.tensor([5.0, 7.0]), 0, torch.tensor([0, 0, 0]),
                               torch.tensor(zeros), "prod", include_self))
        cases.append(grad_case(torch.tensor([0.0, 7.0]), 0, torch.tensor([0, 0, 1]),
                               torch.tensor(zeros), "prod", include_self))
# Counts past what the half types hold exactly: PyTorch's scatter_add adds them in float.
for dtype, n in (("float16", 2100), ("bfloat16", 300)):
    for reduce in ("mean", "amax"):
        cases.append(grad_case(torch.zeros(1, dtype=TORCH_DTYPES[dtype]), 0,
                               torch.zeros(n, dtype=torch.int32),
                               torch.ones(n, dtype=TORCH_DTYPES[dtype]), reduce, True))

path = pathlib.Path(__file__).with_name("along_scatter_cases.json")
path.write_text(json.dumps({"generator": "along_scatter_cases.py",
                            "torch": torch.__version__, "numpy": np.__version__,
                            "cases": cases}, separators=(",", ":")) + "\n")
print(f"{len(cases)} cases, {sum('error' in c for c in cases)} errors, "
      f"{sum(c['op'] == 'scatter_reduce' for c in cases)} of scatter_reduce, "
      f"{sum(c['op'] == 'scatter_reduce_grad' for c in cases)} of its gradient")
