"""Writes embedding_bag_cases.json: PyTorch's own results for torch.nn.functional.embedding_bag
(every mode, with and without per_sample_weights, padding_idx, empty bags, include_last_offset,
2-D inputs; float32 and float64) with the gradients of the weight, dense and (but for "max",
which PyTorch refuses) sparse, and of per_sample_weights, and PyTorch's errors. For tests/embedding_bag.rs and the Python
package's tests. Run once where torch is installed (not in CI):

    python crates/ndgather/tests/data/embedding_bag_cases.py
"""
import itertools
import json
import pathlib

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20261126)
cases = []


def arr(a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape),
            "data": a.astype(np.float64).ravel().tolist() if a.dtype.kind == "f"
            else a.ravel().tolist()}


def bags(n_ids, empty, include_last_offset):
    """Offsets of five bags over n_ids ids; with `empty`, empty bags first, in the middle
    and last."""
    c = sorted(rng.choice(np.arange(1, n_ids), 4, replace=False).tolist())
    offsets = [0] + c
    if empty:
        offsets = [0, 0] + c[:3] + [c[2]] + c[3:] + [n_ids]
    if include_last_offset:
        offsets = offsets + [n_ids]
    return offsets


def run(weight, input, offsets, mode, psw, padding_idx, include_last_offset, max_norm=None):
    # (Copies: with max_norm, PyTorch renormalises the rows of its weight in place.)
    w = torch.from_numpy(weight.copy()).requires_grad_()
    p = None if psw is None else torch.from_numpy(psw).requires_grad_()
    kwargs = dict(mode=mode, padding_idx=padding_idx, include_last_offset=include_last_offset,
                  per_sample_weights=p)
    if max_norm is not None:
        kwargs["max_norm"] = max_norm
    off = None if offsets is None else torch.tensor(offsets, dtype=torch.int64)
    out = F.embedding_bag(torch.from_numpy(input), w, off, **kwargs)
    upstream = rng.standard_normal(out.shape).astype(weight.dtype)
    out.backward(torch.from_numpy(upstream))
    case = {"weight": arr(weight), "input": arr(input), "offsets": offsets, "mode": mode,
            "per_sample_weights": None if psw is None else arr(psw),
            "padding_idx": padding_idx, "include_last_offset": include_last_offset,
            "output": arr(out.detach().numpy()), "upstream": arr(upstream),
            "dense_grad": arr(w.grad.numpy())}
    if p is not None:
        case["weights_grad"] = arr(p.grad.numpy())
    if max_norm is not None:
        case["max_norm"] = max_norm
    if mode != "max":
        ws = torch.from_numpy(weight.copy()).requires_grad_()
        out = F.embedding_bag(torch.from_numpy(input), ws, off, sparse=True, **kwargs)
        out.backward(torch.from_numpy(upstream))
        g = ws.grad
        case["sparse_grad"] = {"indices": g._indices()[0].tolist(),
                               "values": arr(g._values().numpy())}
    return case


for dtype, mode, weighted, padding, empty, last in itertools.product(
        (np.float32, np.float64), ("sum", "mean", "max"), (False, True), (None, 3, -2),
        (False, True), (False, True)):
    if weighted and mode != "sum":
        continue
    weight = rng.standard_normal((9, 4)).astype(dtype)
    n = 23
    input = rng.integers(0, 9, n).astype(np.int64)
    offsets = bags(n, empty, last)
    psw = rng.standard_normal(n).astype(dtype) if weighted else None
    cases.append(run(weight, input, offsets, mode, psw, padding, last))

for dtype, mode in itertools.product((np.float32, np.float64), ("sum", "mean", "max")):
    weight = rng.standard_normal((7, 3)).astype(dtype)
    input = rng.integers(0, 7, (4, 5)).astype(np.int64)
    psw = rng.standard_normal((4, 5)).astype(dtype) if mode == "sum" else None
    cases.append(run(weight, input, None, mode, psw, 1, False))

# Long bags in float32: the order of the additions shows in the last bits.
weight = rng.standard_normal((50, 7)).astype(np.float32)
input = rng.integers(0, 50, 2000).astype(np.int64)
offsets = [0] + sorted(rng.choice(np.arange(1, 2000), 30, replace=False).tolist())
for mode, psw in (("sum", None), ("sum", rng.standard_normal(2000).astype(np.float32)),
                  ("mean", None), ("max", None)):
    cases.append(run(weight, input, offsets, mode, psw, None, False))

# max_norm: PyTorch's embedding_renorm_ of each looked-up row (norms around 1 to 3 against
# 0.8, 1.5 and a negative max_norm, which flips every row), and its gradients.
for dtype, mode, max_norm in itertools.product((np.float32, np.float64), ("sum", "mean", "max"),
                                               (0.8, 1.5, -0.5)):
    weight = rng.standard_normal((9, 3)).astype(dtype)
    n = 23
    input = rng.integers(0, 9, n).astype(np.int64)
    psw = rng.standard_normal(n).astype(dtype) if mode == "sum" else None
    cases.append(run(weight, input, bags(n, False, False), mode, psw, None, False, max_norm))

errors = []


def refused(name, call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - PyTorch's class and message are the record
        errors.append({"name": name, "class": type(e).__name__, "message": str(e).split("\n")[0]})
        return
    raise AssertionError(f"{name} was accepted")


W = torch.zeros(6, 3)
t = lambda v: torch.tensor(v, dtype=torch.int64)  # noqa: E731
refused("offsets_not_from_zero", lambda: F.embedding_bag(t([1, 2]), W, t([1])))
refused("offsets_past_the_end", lambda: F.embedding_bag(t([1, 2]), W, t([0, 3])))
refused("id_out_of_range", lambda: F.embedding_bag(t([1, 7]), W, t([0])))
refused("negative_id", lambda: F.embedding_bag(t([-1]), W, t([0])))
refused("weights_outside_sum", lambda: F.embedding_bag(
    t([1, 2]), W, t([0]), mode="mean", per_sample_weights=torch.ones(2)))
refused("weights_of_another_shape", lambda: F.embedding_bag(
    t([1, 2]), W, t([0]), per_sample_weights=torch.ones(3)))
refused("padding_idx_out_of_range", lambda: F.embedding_bag(t([1]), W, t([0]), padding_idx=6))
refused("input_2d_with_offsets", lambda: F.embedding_bag(t([[1, 2]]), W, t([0])))
refused("input_1d_without_offsets", lambda: F.embedding_bag(t([1, 2]), W, None))
refused("input_3d", lambda: F.embedding_bag(t([[[1]]]), W, None))
refused("include_last_offset_without_offsets", lambda: F.embedding_bag(
    t([1, 2]), W, t([]), include_last_offset=True))

path = pathlib.Path(__file__).with_name("embedding_bag_cases.json")
path.write_text(json.dumps({"torch": torch.__version__, "cases": cases, "errors": errors}))
print(f"{len(cases)} cases, {len(errors)} errors -> {path}")
