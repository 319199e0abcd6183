"""ng.embedding_bag against PyTorch's own results (the core's committed case file, written by
crates/ndgather/tests/data/embedding_bag_cases.py with torch), PyTorch's exception classes,
and, where torch is installed, torch itself on random cases."""

import itertools
import json
import pathlib

import numpy as np
import pytest

import ndgather as ng

CASES = json.loads((pathlib.Path(__file__).parents[2] / "ndgather" / "tests" / "data"
                    / "embedding_bag_cases.json").read_text())


def arr(v):
    return np.array(v["data"], dtype=np.float64).astype(v["dtype"]).reshape(v["shape"]) \
        if v["dtype"].startswith("float") else np.array(v["data"], dtype=v["dtype"]).reshape(
            v["shape"])


def kwargs(case):
    return dict(mode=case["mode"], padding_idx=case["padding_idx"],
                include_last_offset=case["include_last_offset"], max_norm=case.get("max_norm"),
                per_sample_weights=None if case["per_sample_weights"] is None
                else arr(case["per_sample_weights"]))


@pytest.mark.parametrize("k", range(len(CASES["cases"])))
def test_pytorchs_results_bit_for_bit(k):
    case = CASES["cases"][k]
    weight, ids, offsets = arr(case["weight"]), arr(case["input"]), case["offsets"]
    out = ng.embedding_bag(weight, ids, offsets, **kwargs(case))
    want = arr(case["output"])
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8))
    upstream = arr(case["upstream"])
    if "sparse_grad" in case:
        [(indices, values, shape)] = ng.embedding_bag_grad(weight, ids, offsets, upstream,
                                                           sparse=True, **kwargs(case))
        np.testing.assert_array_equal(indices, case["sparse_grad"]["indices"])
        np.testing.assert_array_equal(values, arr(case["sparse_grad"]["values"]))
        assert shape == list(weight.shape)
    [dense] = ng.embedding_bag_grad(weight, ids, offsets, upstream, **kwargs(case))
    want = arr(case["dense_grad"])
    if case["mode"] == "max":
        np.testing.assert_array_equal(dense, want)
    else:  # PyTorch adds through its BLAS (see embedding_bag_grad's documentation)
        scale = np.abs(want).max() * np.finfo(want.dtype).eps
        assert np.abs(dense - want).max() <= 8 * scale


@pytest.mark.parametrize("error", CASES["errors"], ids=lambda e: e["name"])
def test_pytorchs_exception_classes(error):
    w = np.zeros((6, 3), np.float32)
    calls = {
        "offsets_not_from_zero": lambda: ng.embedding_bag(w, [1, 2], [1]),
        "offsets_past_the_end": lambda: ng.embedding_bag(w, [1, 2], [0, 3]),
        "id_out_of_range": lambda: ng.embedding_bag(w, [1, 7], [0]),
        "negative_id": lambda: ng.embedding_bag(w, [-1], [0]),
        "weights_outside_sum": lambda: ng.embedding_bag(w, [1, 2], [0], mode="mean",
                                                        per_sample_weights=[1.0, 1.0]),
        "weights_of_another_shape": lambda: ng.embedding_bag(w, [1, 2], [0], mode="sum",
                                                             per_sample_weights=[1.0] * 3),
        "padding_idx_out_of_range": lambda: ng.embedding_bag(w, [1], [0], padding_idx=6),
        "input_2d_with_offsets": lambda: ng.embedding_bag(w, [[1, 2]], [0]),
        "input_1d_without_offsets": lambda: ng.embedding_bag(w, [1, 2]),
        "input_3d": lambda: ng.embedding_bag(w, [[[1]]]),
        "include_last_offset_without_offsets": lambda: ng.embedding_bag(
            w, [1, 2], np.array([], np.int64), include_last_offset=True),
    }
    cls = {"ValueError": ValueError, "RuntimeError": RuntimeError,
           "NotImplementedError": NotImplementedError}[error["class"]]
    with pytest.raises(cls) as e:
        calls[error["name"]]()
    want = error["message"].replace("torch.Size(", "").replace("])", "]")
    assert str(e.value) == want.split(" However, found offsets")[0]


def test_ids_after_the_last_offset():
    # PyTorch's CPU kernels read them inconsistently (see the Rust test of the same name):
    # refused, with the offsets' fix.
    w = np.arange(12, dtype=np.float32).reshape(6, 2)
    ids, offsets = np.arange(5), np.array([0, 2, 3])
    for mode in ("sum", "mean", "max"):
        with pytest.raises(ValueError, match=r"must be the number of ids \(5\), got 3"):
            ng.embedding_bag(w, ids, offsets, mode=mode, include_last_offset=True)
    np.testing.assert_array_equal(
        ng.embedding_bag(w, ids, [0, 2, 5], mode="sum", include_last_offset=True),
        [[2.0, 4.0], [18.0, 21.0]])


def test_max_norm_against_torch_itself():
    # PyTorch's embedding_renorm_ of each looked-up row (its weight copied: PyTorch writes
    # it), bit for bit, and the gradients, which do not flow through the renormalisation. A
    # dense gradient sums repeated ids in another order than PyTorch's axpy (as in the
    # committed cases): within a few ulps; "max"'s is exact. Half of the calls have a
    # padding_idx, which takes PyTorch's generic kernel instead of FBGEMM's (whose bfloat16
    # sums round ties away from zero).
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the live "
                                "comparison was skipped (the committed cases still ran)")
    import torch.nn.functional as F
    rng = np.random.default_rng(11)
    for dtype, mode, k in itertools.product(
            (torch.float64, torch.bfloat16, torch.float16, torch.float32),
            ("sum", "mean", "max"), range(4)):
        d = int(rng.integers(1, 40))
        w = torch.from_numpy(rng.standard_normal((8, d)) * 2).to(dtype)
        ids = torch.from_numpy(rng.integers(0, 8, 20))
        offsets = torch.tensor([0, 5, 5, 12])
        max_norm = float(rng.uniform(0.5, 2) * np.sqrt(d))
        upstream = torch.from_numpy(rng.standard_normal((4, d))).to(dtype)
        pad = 7 if k % 2 else None
        tw = w.clone().requires_grad_()
        want = F.embedding_bag(ids, tw, offsets, mode=mode, max_norm=max_norm,
                               padding_idx=pad)
        want.backward(upstream)
        nw = w.clone().requires_grad_()
        got = ng.embedding_bag(nw, ids, offsets, mode=mode, max_norm=max_norm,
                               padding_idx=pad)
        got.backward(upstream)
        assert torch.equal(nw.detach(), w), "the table is never written"
        assert torch.equal(got, want.detach()), (dtype, mode, d)
        eps = torch.finfo(dtype).eps
        if mode == "max":
            assert torch.equal(nw.grad, tw.grad), (dtype, mode, d)
        else:
            scale = tw.grad.abs().double().clamp(min=1)
            assert ((nw.grad - tw.grad).abs().double() <= 8 * eps * scale).all(), mode


def test_ids_and_offsets_of_two_integer_types():
    table = np.arange(12.0).reshape(4, 3)
    want = ng.embedding_bag(table, np.array([0, 3, 1]), np.array([0, 2]), mode="sum")
    # int32 ids, int64 offsets: both read as int64, as PyTorch promotes them.
    same = np.testing.assert_array_equal
    same(ng.embedding_bag(table, np.array([0, 3, 1], np.int32), np.array([0, 2]), mode="sum"),
         want)
    # uint64 ids (a huge one clamped to the last row) with list offsets: never wrapped.
    huge = np.array([0, 2**64 - 1, 1], np.uint64)
    same(ng.embedding_bag(table, huge, [0, 2], mode="sum", bad_indices="clamp"), want)
    with pytest.raises(RuntimeError, match="18446744073709551615"):
        ng.embedding_bag(table, huge, [0, 2], mode="sum")
    # An offset past int32's range beside int32 ids is the op's error, not a wrapped 1.
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater"):
        ng.embedding_bag(table, np.array([0, 3], np.int32), np.array([0, 2**32 + 1]))
    # No offsets as an empty list, with no ids: no bags. Float offsets are refused.
    assert ng.embedding_bag(table, np.zeros(0, np.int64), []).shape == (0, 3)
    with pytest.raises(TypeError):
        ng.embedding_bag(table, np.array([0, 3, 1]), [0.0, 2.0])


def test_sparse_changes_nothing_outside_pytorch():
    # sparse=True is PyTorch's gradient layout: NumPy has no gradient, and JAX's gradient of
    # the bag is its dense one.
    w = np.arange(12.0).reshape(6, 2)
    ids, offsets = np.array([1, 2, 3, 1]), np.array([0, 1])
    np.testing.assert_array_equal(ng.embedding_bag(w, ids, offsets, sparse=True),
                                  ng.embedding_bag(w, ids, offsets))
    jax = pytest.importorskip("jax")
    grads = [jax.grad(lambda t, s=s: ng.embedding_bag(t, ids, offsets, mode="sum",
                                                      sparse=s).sum())(jax.numpy.asarray(w))
             for s in (True, False)]
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0][:, 0], [0, 2, 1, 1, 0, 0])
