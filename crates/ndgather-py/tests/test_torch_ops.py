"""ndgather's gathers as native PyTorch ops (issue 55): ``torch.library`` custom ops with fake
implementations and autograd, checked by ``torch.library.opcheck``, through
``torch.compile(fullgraph=True)``, and against PyTorch's own ops and gradients.

PyTorch is large and not in CI's venv: ``scripts/test.sh --frameworks`` installs it (pinned in
requirements-frameworks.txt) into a venv of its own and runs this file there. Elsewhere it
is skipped, saying so.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

# torch before ndgather, as the docs ask, so that the ops are defined at import.
torch = pytest.importorskip("torch", reason="PyTorch is not installed: run "
                            "scripts/test.sh --frameworks")
import ndgather as ng  # noqa: E402

TABLE = torch.arange(24, dtype=torch.float32).reshape(6, 4) * 0.5 - 3.0
IDS = torch.tensor([5, 1, 1, 0])


def leaf():
    return TABLE.clone().requires_grad_(True)


def test_a_tensor_that_requires_grad_gets_a_grad_fn():
    t = leaf()
    rows = ng.gather(t, IDS)
    assert rows.grad_fn is not None
    assert torch.equal(rows.detach(), TABLE[IDS])
    # Without grad, the eager DLPack path: no graph, the same values.
    plain = ng.gather(TABLE, IDS)
    assert plain.grad_fn is None and torch.equal(plain, rows.detach())


def test_gradients_equal_pytorch_own():
    w = torch.arange(16.0).reshape(4, 4)
    ours, theirs = leaf(), leaf()
    (ng.gather(ours, IDS) * w).sum().backward()
    (torch.index_select(theirs, 0, IDS) * w).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)  # repeated id 1 adds both rows' cotangents

    nd = torch.tensor([[5, 3], [0, 1], [5, 3]])
    ours, theirs = leaf(), leaf()
    (ng.gather_nd(ours, nd) * torch.arange(3.0)).sum().backward()
    (theirs[nd[:, 0], nd[:, 1]] * torch.arange(3.0)).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)

    along = torch.argsort(TABLE, dim=1)[:, :2]
    ours, theirs = leaf(), leaf()
    (ng.take_along_axis(ours, along, axis=1) ** 2).sum().backward()
    (torch.gather(theirs, 1, along) ** 2).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)

    ours, theirs = leaf(), leaf()
    (ng.gather(ours, torch.tensor([2, 0]), axis=1) ** 3).sum().backward()
    (torch.index_select(theirs, 1, torch.tensor([2, 0])) ** 3).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)


def test_gradients_sum_repeats_in_pytorch_order():
    # Random values and many repeats, so that an order of the sums other than PyTorch's
    # (index_add_, in the order of the ids) would show in the last bits.
    g = torch.Generator().manual_seed(7)
    table = torch.randn(50, 8, generator=g)
    ids = torch.randint(0, 5, (4000,), generator=g)
    w = torch.randn(4000, 8, generator=g)
    ours, theirs = table.clone().requires_grad_(True), table.clone().requires_grad_(True)
    (ng.gather(ours, ids) * w).sum().backward()
    (torch.index_select(theirs, 0, ids) * w).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)


@pytest.mark.parametrize("policy, expected_ids", [
    ("clamp", [5, 5, 0]), ("wrap", [5, 3, 5]), ("negative", None), ("ignore", [5, None, None]),
    ("fill", [5, None, None])])
def test_gradients_follow_each_policy(policy, expected_ids):
    bad = torch.tensor([5, 9, -1]) if policy != "negative" else torch.tensor([5, -1, -6])
    t = leaf()
    ng.gather(t, bad, bad_indices=policy).sum().backward()
    expected = torch.zeros_like(TABLE)
    for k in (expected_ids or [5, 5, 0]):
        if k is not None:
            expected[k] += 1
    assert torch.equal(t.grad, expected), (policy, t.grad)


def test_axis_batch_dims_and_the_numpy_names_with_autograd():
    ours, theirs = leaf(), leaf()
    (ng.gather(ours, torch.tensor([3, 0]), axis=-1) ** 2).sum().backward()
    (torch.index_select(theirs, 1, torch.tensor([3, 0])) ** 2).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)
    ours, theirs = leaf(), leaf()
    b = torch.tensor([[3, 0]] * 6)
    (ng.gather(ours, b, axis=1, batch_dims=1) ** 2).sum().backward()
    (torch.gather(theirs, 1, b) ** 2).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)
    ours, theirs = leaf(), leaf()
    (ng.take(ours, torch.tensor([1, 1]), axis=0) * 3).sum().backward()
    (theirs[[1, 1]] * 3).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)
    # The NumPy functions' error classes, as their eager calls raise them.
    with pytest.raises(IndexError):
        ng.take(leaf(), torch.tensor([7]), axis=0)
    with pytest.raises(np.exceptions.AxisError):
        ng.take(leaf(), torch.tensor([0]), axis=5)


def test_bfloat16_with_autograd():
    # The bodies read bfloat16 as ml_dtypes' type (NumPy has none); results and gradients
    # are PyTorch's own.
    t = TABLE.to(torch.bfloat16).requires_grad_(True)
    theirs = TABLE.to(torch.bfloat16).requires_grad_(True)
    ours, want = ng.gather(t, IDS), torch.index_select(theirs, 0, IDS)
    assert ours.dtype == torch.bfloat16 and torch.equal(ours.detach(), want.detach())
    (ours * 3).sum().backward()
    (want * 3).sum().backward()
    assert torch.equal(t.grad, theirs.grad)
    # Eagerly too, without autograd: read through its bits, not DLPack (which has none).
    plain = ng.gather(TABLE.to(torch.bfloat16), IDS)
    assert plain.dtype == torch.bfloat16 and torch.equal(plain, want.detach())


def test_what_the_ops_refuse_and_fill_value():
    filled = ng.gather(leaf(), torch.tensor([0, 9]), bad_indices="fill", fill_value=1.5)
    assert torch.equal(filled[1].detach(), torch.full((4,), 1.5))


def test_policies_with_autograd():
    bad = torch.tensor([5, 9, -1])
    t = leaf()
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[1\] = 9 is not in \[0, 6\)"):
        ng.gather(t, bad)
    clamped = ng.gather(t, bad, bad_indices="clamp")
    clamped.sum().backward()
    theirs = leaf()
    torch.index_select(theirs, 0, bad.clamp(0, 5)).sum().backward()
    assert torch.equal(t.grad, theirs.grad)
    with pytest.raises(TypeError, match="out is not taken"):
        ng.gather(leaf(), IDS, out=torch.empty(4, 4))


@pytest.mark.parametrize("name, inputs, attrs", [
    ("gather", (TABLE, IDS), {}),
    ("gather", (TABLE, torch.tensor([[3, 0]] * 6)), {"axis": 1, "batch_dims": 1,
                                                       "bad_indices": "clamp"}),
    ("gather_nd", (TABLE, torch.tensor([[5, 3], [0, 1]])), {}),
    ("take_along_axis", (TABLE, torch.argsort(TABLE, dim=1)[:, :2]), {"axis": 1}),
    ("unsorted_segment_max", (TABLE, torch.tensor([2, 0, 2, -1, 1, 0])),
     {"num_segments": 3}),
    ("tensor_scatter_nd_add", (TABLE, torch.tensor([[1], [1]]), torch.ones(2, 4)), {}),
])
def test_opcheck(name, inputs, attrs):
    op, _ = ng._torch.ops()
    tensors = [t.clone().requires_grad_(True) if t.is_floating_point() else t for t in inputs]
    torch.library.opcheck(op, (tensors, [1] * len(tensors), name,
                               _attrs(name, attrs)))


def test_segment_and_scatter_gradients_equal_pytorch_own():
    data, ids = leaf(), torch.tensor([2, 0, 2, 1, 1, 0])
    ours = ng.unsorted_segment_sum(data, ids, 4)
    theirs_data = leaf()
    theirs = torch.zeros(4, 4).index_add(0, ids, theirs_data)
    w = torch.arange(16.0).reshape(4, 4)
    (ours * w).sum().backward()
    (theirs * w).sum().backward()
    assert torch.equal(ours.detach(), theirs.detach())
    assert torch.equal(data.grad, theirs_data.grad)
    tensor, updates = leaf(), torch.arange(8.0).reshape(2, 4).requires_grad_(True)
    out = ng.tensor_scatter_nd_update(tensor, torch.tensor([[5], [0]]), updates)
    (out * torch.arange(24.0).reshape(6, 4)).sum().backward()
    want = torch.ones(6, 4) * torch.arange(24.0).reshape(6, 4)
    want[[5, 0]] = 0
    assert torch.equal(tensor.grad, want)
    assert torch.equal(updates.grad, torch.arange(24.0).reshape(6, 4)[[5, 0]])
    # The sorted reductions' rows come from the ids' values.
    s = ng.segment_max(leaf(), torch.tensor([0, 0, 1, 3, 3, 3]))
    assert s.shape == (4, 4)
    s.sum().backward()


def _double(x):
    return x.detach().to(torch.float64).requires_grad_(True)


@pytest.mark.parametrize("case", ["gather", "fill", "gather_nd", "segment_sum", "scatter_add",
                                  "embedding_bag"])
def test_eager_second_derivatives_equal_pytorch_own(case):
    """``create_graph=True`` then another backward, in eager autograd: the gradient's own
    derivative (the C++ kernel's), against PyTorch's ops and its ``gradgradcheck``."""
    ids, segs = torch.tensor([5, 1, 1, 0]), torch.tensor([2, 0, 2, 1, 1, 0])
    ours, theirs = {
        "gather": (lambda t: ng.gather(t, ids), lambda t: t[ids]),
        "fill": (lambda t: ng.gather(t, torch.tensor([5, 9, 1]), bad_indices="fill",
                                     fill_value=2.5),
                 lambda t: torch.cat([t[5:6], torch.full((1, 4), 2.5, dtype=t.dtype),
                                      t[1:2]])),
        "gather_nd": (lambda t: ng.gather_nd(t, torch.tensor([[5, 1], [0, 3], [5, 1]])),
                      lambda t: t[[5, 0, 5], [1, 3, 1]]),
        "segment_sum": (lambda t: ng.unsorted_segment_sum(t, segs, 4),
                        lambda t: torch.zeros(4, 4, dtype=t.dtype).index_add(0, segs, t)),
        "scatter_add": (lambda t: ng.tensor_scatter_nd_add(t, torch.tensor([[5], [0], [5]]),
                                                           t[:3] * 2),
                        lambda t: t.index_add(0, torch.tensor([5, 0, 5]), t[:3] * 2)),
        "embedding_bag": (lambda t: ng.embedding_bag(t, torch.tensor([[5, 1], [0, 0]]),
                                                     mode="sum"),
                          # (PyTorch's own embedding_bag has no second derivative.)
                          lambda t: t[torch.tensor([[5, 1], [0, 0]])].sum(1)),
    }[case]
    x, y = _double(TABLE), _double(TABLE)
    answers = []
    for f, t in ((ours, x), (theirs, y)):
        g, = torch.autograd.grad((f(t) ** 3).sum(), t, create_graph=True)
        assert g.requires_grad
        h, = torch.autograd.grad((g * torch.arange(24.0).reshape(6, 4)).sum(), t)
        answers.append((g.detach(), h))
    assert torch.allclose(answers[0][0], answers[1][0])
    assert torch.allclose(answers[0][1], answers[1][1])
    assert torch.autograd.gradgradcheck(ours, (_double(TABLE),))


def test_eager_third_derivatives_and_a_gradient_penalty():
    x = _double(TABLE)
    f = lambda t: (ng.gather(t, torch.tensor([5, 1, 1])) ** 4).sum()
    g, = torch.autograd.grad(f(x), x, create_graph=True)
    h, = torch.autograd.grad(g.sum(), x, create_graph=True)
    third, = torch.autograd.grad(h.sum(), x)
    rows = torch.tensor([0, 2, 0, 0, 0, 1], dtype=torch.float64)[:, None]  # 5 once, 1 twice
    assert torch.allclose(third, 24 * x.detach() * rows)
    # A gradient penalty: the gradient of the output's gradient's norm, through the upstream.
    w = _double(torch.ones(3, 4))
    out = ng.gather(x, torch.tensor([5, 1, 1]))
    g, = torch.autograd.grad((out * w).sum(), x, create_graph=True)
    g.pow(2).sum().backward()
    assert torch.allclose(w.grad, 2 * w.detach() * torch.tensor([1.0, 2.0, 2.0],
                                                                 dtype=torch.float64)[:, None])


@pytest.mark.parametrize("case", ["segment_max", "update", "bag_weights"])
def test_eager_second_derivatives_of_nonlinear_ops_raise_at_the_second_backward(case):
    f = {
        "segment_max": lambda t: ng.unsorted_segment_max(t, torch.tensor([0, 1, 0, 1, 0, 1]),
                                                         2),
        "update": lambda t: ng.tensor_scatter_nd_update(t, torch.tensor([[5], [0]]), t[:2]),
        "bag_weights": lambda t: ng.embedding_bag(
            t, torch.tensor([[5, 1]]), per_sample_weights=t[:1, :2], mode="sum"),
    }[case]
    x = _double(TABLE)
    g, = torch.autograd.grad((f(x) ** 2).sum(), x, create_graph=True)  # no error yet
    plain = _double(TABLE)
    assert torch.equal(g.detach(), torch.autograd.grad((f(plain) ** 2).sum(), plain)[0])
    with pytest.raises(RuntimeError, match="derivative for ndgather::.* is not implemented"):
        torch.autograd.grad(g.sum(), x)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_equal_pytorch_own(reduce, include_self):
    index = torch.tensor([[1, 0, 5, 1], [1, 1, 0, 2], [5, 0, 5, 2]])
    src = torch.tensor([[2.0, 0.0, -1.0, 3.0], [2.0, 1.5, 0.0, 0.0], [7.0, 0.0, 2.0, 3.0]])
    table = TABLE.clone()
    table[1, 0] = 2.0  # a tie with src in amax
    w = torch.arange(24.0).reshape(6, 4) - 5.0
    grads = []
    for f in (ng.scatter_reduce, torch.scatter_reduce):
        t, s = table.clone().requires_grad_(True), src.clone().requires_grad_(True)
        (f(t, 0, index, s, reduce, include_self=include_self) * w).sum().backward()
        grads.append((t.grad, s.grad))
    assert torch.equal(grads[0][0], grads[1][0])
    assert torch.equal(grads[0][1], grads[1][1])


def test_scatter_nd_and_gather_segment_gradients_equal_pytorch_own():
    w = torch.arange(32.0).reshape(8, 4)
    ours, theirs = leaf(), leaf()
    ids = torch.tensor([[7], [0], [7], [2], [3], [1]])
    (ng.scatter_nd(ids, ours, [8, 4]) * w).sum().backward()
    (torch.zeros(8, 4).index_add(0, ids[:, 0], theirs) * w).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)
    # gather_segment as PyG runs message passing without torch_scatter.
    src, dst = torch.tensor([0, 5, 5, 2, 1]), torch.tensor([2, 0, 2, 2, 1])
    v = torch.arange(12.0).reshape(3, 4)
    ours, theirs = leaf(), leaf()
    (ng.gather_segment(ours, src, dst, 3) * v).sum().backward()
    (torch.zeros(3, 4).index_add(0, dst, theirs.index_select(0, src)) * v).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)


def test_an_embedding_lookups_gradient_equals_pytorch_own():
    ids = torch.tensor([[5, 0], [5, 3]])
    w = torch.arange(16.0).reshape(2, 2, 4)
    ours, theirs = leaf(), leaf()
    (ng.embedding_lookup(ours, ids) * w).sum().backward()
    (torch.nn.functional.embedding(ids, theirs) * w).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)
    # Two shards, "mod": each gets the rows of its ids, repeated ids summed.
    even, odd = TABLE[0::2].clone().requires_grad_(True), TABLE[1::2].clone().requires_grad_(True)
    (ng.embedding_lookup([even, odd], ids) * w).sum().backward()
    assert torch.equal(even.grad, theirs.grad[0::2])
    assert torch.equal(odd.grad, theirs.grad[1::2])
    # And compiled, with no graph break.
    torch._dynamo.reset()
    compiled = torch.compile(lambda t: (ng.embedding_lookup(t, ids) * w).sum(), fullgraph=True)
    again = leaf()
    compiled(again).backward()
    assert torch.equal(again.grad, theirs.grad)


def test_torch_compile_keeps_a_segment_reduction_in_its_graph():
    torch._dynamo.reset()
    f = torch.compile(lambda d, i: ng.unsorted_segment_sum(d, i, 3) * 2, fullgraph=True)
    ids = torch.tensor([2, 0, 2, 1, 1, 0])
    assert torch.equal(f(TABLE, ids), torch.zeros(3, 4).index_add(0, ids, TABLE) * 2)


def test_torch_compile_fullgraph_forward_and_backward():
    torch._dynamo.reset()

    def loss(table, ids):
        return (ng.gather(table, ids) ** 2).sum()

    compiled = torch.compile(loss, fullgraph=True)
    ours, theirs = leaf(), leaf()
    got = compiled(ours, IDS)
    got.backward()
    want = (torch.index_select(theirs, 0, IDS) ** 2).sum()
    want.backward()
    assert torch.equal(got.detach(), want.detach())
    assert torch.equal(ours.grad, theirs.grad)
    # And a call with no grad inside the compiled function: still in the graph.
    lookup = torch.compile(lambda table, ids: ng.gather(table, ids) * 2, fullgraph=True)
    assert torch.equal(lookup(TABLE, IDS), TABLE[IDS] * 2)


#: (ndgather's call, PyTorch's own op, inputs for a batch of n): no two sizes of a case equal
#: (torch.compile gives equal sizes one symbol).
DYNAMIC_CASES = {
    "gather": (lambda p, i: ng.gather(p, i), lambda p, i: torch.index_select(p, 0, i),
               lambda n: (torch.randn(16 + n, 4), torch.arange(n) % 16)),
    "gather axis 1": (lambda p, i: ng.gather(p, i, axis=1),
                      lambda p, i: torch.index_select(p, 1, i),
                      lambda n: (torch.randn(4, 16 + n), torch.arange(n) % 16)),
    "batch_dims": (lambda p, i: ng.gather(p, i, batch_dims=1), lambda p, i: torch.gather(p, 1, i),
                   lambda n: (torch.randn(n, 8), torch.arange(3 * n).reshape(n, 3) % 8)),
    "take_along_axis": (lambda p, i: ng.take_along_axis(p, i, 1),
                        lambda p, i: torch.take_along_dim(p, i, 1),
                        lambda n: (torch.randn(n, 8), torch.arange(3 * n).reshape(n, 3) % 8)),
    "gather_nd": (lambda p, i: ng.gather_nd(p, i), lambda p, i: p[i[:, 0], i[:, 1]],
                  lambda n: (torch.randn(6, 5, 3),
                             torch.stack([torch.arange(n) % 6, torch.arange(n) % 5], 1))),
    "embedding_bag": (lambda p, i: ng.embedding_bag(p, i, torch.arange(0, i.shape[0], 2)),
                      lambda p, i: torch.nn.functional.embedding_bag(
                          i, p, torch.arange(0, i.shape[0], 2)),
                      lambda n: (torch.randn(20, 4), torch.arange(2 * n) % 20)),
    "embedding_bag include_last_offset": (
        lambda p, i: ng.embedding_bag(p, i, torch.arange(0, i.shape[0] + 1, 2),
                                      include_last_offset=True),
        lambda p, i: torch.nn.functional.embedding_bag(
            i, p, torch.arange(0, i.shape[0] + 1, 2), include_last_offset=True),
        lambda n: (torch.randn(20, 4), torch.arange(2 * n) % 20)),
    "tensor_scatter_nd_add": (
        lambda t, i: ng.tensor_scatter_nd_add(t, i[:, None] % 4, torch.ones(i.shape[0], 3)),
        lambda t, i: t.index_add(0, i % 4, torch.ones(i.shape[0], 3)),
        lambda n: (torch.zeros(4, 3), torch.arange(n))),
    "unsorted_segment_sum": (lambda d, s: ng.unsorted_segment_sum(d, s, 5),
                             lambda d, s: torch.zeros(5, d.shape[1]).index_add(0, s, d),
                             lambda n: (torch.randn(n, 3), torch.arange(n) % 5)),
}


def _frames(f, make, sizes, dynamic, grad=False):
    """How many graphs torch.compile makes of ``f`` over batches of ``sizes``, and the
    results (with params' gradient where ``grad``)."""
    from torch._dynamo.testing import CompileCounterWithBackend
    torch._dynamo.reset()
    count = CompileCounterWithBackend("inductor")
    compiled = torch.compile(f, backend=count, fullgraph=True, dynamic=dynamic)
    results = []
    for n in sizes:
        torch.manual_seed(n)
        a, b = make(n)
        if grad:
            a.requires_grad_(True)
            (compiled(a, b) ** 2).sum().backward()
            results.append(a.grad)
        else:
            results.append(compiled(a, b))
    return count.frame_count, results


@pytest.mark.parametrize("case", list(DYNAMIC_CASES))
@pytest.mark.parametrize("dynamic", [None, True])
def test_one_graph_serves_every_batch_size_as_pytorchs_own_op(case, dynamic):
    ours, theirs, make = DYNAMIC_CASES[case]
    sizes = (7, 9, 11, 13, 17)
    frames, got = _frames(ours, make, sizes, dynamic)
    their_frames, want = _frames(theirs, make, sizes, dynamic)
    assert [r.shape for r in got] == [r.shape for r in want]
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    # One graph for dynamic=True; the default compiles a second, dynamic one, at the first
    # new size: never one per size, and no more than PyTorch's own op (take_along_dim
    # compiles one per size).
    assert frames == (1 if dynamic else 2) <= their_frames


@pytest.mark.parametrize("case", ["gather", "batch_dims", "embedding_bag"])
def test_one_graph_serves_every_batch_size_with_gradients(case):
    ours, theirs, make = DYNAMIC_CASES[case]
    frames, got = _frames(ours, make, (7, 9, 11, 13), None, grad=True)
    their_frames, want = _frames(theirs, make, (7, 9, 11, 13), None, grad=True)
    assert all(torch.allclose(g, w) for g, w in zip(got, want))
    assert frames == 2 <= their_frames


def test_dynamic_sizes_that_must_match_or_be_numbers_are_guarded():
    # Two symbols that a batch gather needs equal: one graph while they are, and the
    # core's error where they are not.
    f = lambda p, i: ng.gather(p, i, batch_dims=1)  # noqa: E731
    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, dynamic=True)
    for n in (7, 9):
        p, i = torch.randn(n, 8), torch.arange(3 * n).reshape(n, 3) % 8
        assert torch.equal(compiled(p, i), torch.gather(p, 1, i))
    with pytest.raises(Exception, match="batch"):
        compiled(torch.randn(7, 8), torch.zeros(9, 3, dtype=torch.int64))
    # gather_nd's index depth is a number: a new depth is a new graph, and right.
    g = torch.compile(lambda p, i: ng.gather_nd(p, i), fullgraph=True, dynamic=True)
    p = torch.randn(6, 5, 3)
    for depth in (2, 3):
        i = torch.zeros(7, depth, dtype=torch.int64)
        assert torch.equal(g(p, i), torch.tensor(ng.gather_nd(p.numpy(), i.numpy())))


def test_mark_dynamic_and_an_exported_programs_dynamic_sizes():
    torch._dynamo.reset()
    p, i = torch.randn(30, 4), torch.arange(9) % 30
    torch._dynamo.mark_dynamic(i, 0)
    torch._dynamo.mark_dynamic(p, 0)
    assert torch.equal(torch.compile(lambda p, i: ng.gather(p, i), fullgraph=True)(p, i), p[i])

    class Lookup(torch.nn.Module):
        def forward(self, p: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
            return ng.gather(p, i) * 2

    rows, n = torch.export.Dim("rows"), torch.export.Dim("n")
    program = torch.export.export(Lookup(), (p, i), dynamic_shapes=({0: rows}, {0: n}))
    p2, i2 = torch.randn(50, 4), torch.arange(13) % 50
    assert torch.equal(program.module()(p2, i2), p2[i2] * 2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int16])
def test_a_fill_value_under_torch_compile(dtype):
    torch._dynamo.reset()
    table, ids = TABLE.to(dtype), torch.tensor([1, 9, -1])
    f = torch.compile(lambda p, i: ng.gather(p, i, bad_indices="fill", fill_value=-2),
                      fullgraph=True)
    want = table[[1, 0, 0]]
    want[1:] = -2
    assert torch.equal(f(table, ids), want)
    assert torch.equal(ng.gather(table, ids, bad_indices="fill", fill_value=-2), want)


def test_a_tensor_or_numpy_fill_value_is_read_at_each_call():
    # Only a Python value is a constant of the compiled code: a tensor's or a NumPy
    # scalar's is read at each call (outside the graph), never frozen at the first.
    torch._dynamo.reset()
    ids = torch.tensor([0, 99])
    f = torch.compile(lambda p, i: ng.gather(p, i, bad_indices="fill", fill_value=p.min()))
    assert [f(torch.full((3, 2), k), ids)[1].tolist() for k in (1.0, 2.0)] == [[1, 1], [2, 2]]
    g = torch.compile(lambda p, i, v: ng.gather(p, i, bad_indices="fill", fill_value=v))
    for v in (torch.tensor(5.0), torch.tensor(7.0), np.float32(3), np.float32(4), 6.0, 8.0):
        assert g(torch.zeros(3, 2), ids, v)[1].tolist() == [float(v)] * 2


@pytest.mark.parametrize("kwargs, error", [
    ({"fill_value": 1.0}, ValueError), ({"bad_indices": "fill", "fill_value": "x"}, ValueError),
    ({"axis": [1.5]}, TypeError), ({"bad_indices": "fill\nx"}, ValueError),
    ({"bad_indices": "fill", "fill_value": 1000}, OverflowError)])
def test_attribute_errors_under_torch_compile_keep_their_class(kwargs, error):
    torch._dynamo.reset()
    f = torch.compile(lambda p, i: ng.gather(p, i, **kwargs))
    with pytest.raises(error):
        f(torch.zeros(3, 2, dtype=torch.int8), torch.tensor([0, 1]))


def test_a_zero_dimensional_tensor_attribute_in_one_graph():
    torch._dynamo.reset()
    f = torch.compile(lambda p, i: ng.gather(p, i, axis=torch.tensor(1)), fullgraph=True)
    assert torch.equal(f(TABLE, torch.tensor([1, 0])), TABLE[:, [1, 0]])


#: (an ndgather call on tensors, the tensors, which of them require grad): the compiled
#: gradient formula's cases, a list input's and an output read by the gradient among them.
GRAD_CASES = {
    "gather": (lambda t, i: ng.gather(t, i), lambda: (TABLE.clone(), IDS), [0]),
    "gather complex": (lambda t, i: ng.gather(t, i),
                       lambda: (TABLE.to(torch.complex64) * (1 + 2j), IDS), [0]),
    "unsorted_segment_max": (lambda d, s: ng.unsorted_segment_max(d, s, 4),
                             lambda: (TABLE.clone(), torch.tensor([0, 2, 0, 1, 2, 2])), [0]),
    "scatter_reduce amax": (
        lambda x, i, s: ng.scatter_reduce(x, 0, i, s, "amax", include_self=False),
        lambda: (TABLE.clone(), torch.tensor([[0, 1, 0, 2]] * 3), TABLE[:3] * 2), [0, 2]),
    "embedding_lookup shards": (lambda a, b, i: ng.embedding_lookup([a, b], i),
                                lambda: (TABLE[:3].clone(), TABLE[3:].clone(), IDS), [0, 1]),
    "embedding_bag weights": (
        lambda t, i, w: ng.embedding_bag(t, i, torch.tensor([0, 2]), mode="sum",
                                        per_sample_weights=w),
        lambda: (TABLE.clone(), IDS, torch.tensor([0.5, -1.0, 2.0, 3.0])), [0, 2]),
    "tensor_scatter_nd_add": (
        lambda t, i, u: ng.tensor_scatter_nd_add(t, i, u),
        lambda: (TABLE.clone(), torch.tensor([[1], [4], [1]]), TABLE[:3] * 3), [0, 2]),
}


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_compiled_gradients_equal_eager_ones(case):
    from torch._dynamo.testing import AotEagerAndRecordGraphs
    call, make, wrt = GRAD_CASES[case]
    grads = []
    for backend in (None, "inductor", "record"):
        tensors = list(make())
        for k in wrt:
            tensors[k].requires_grad_(True)
        torch._dynamo.reset()
        record = AotEagerAndRecordGraphs()
        f = call if backend is None else torch.compile(
            call, fullgraph=True, backend=record if backend == "record" else backend)
        out = f(*tensors)
        (out.abs() ** 2).sum().backward()
        grads.append([tensors[k].grad for k in wrt])
    for eager, compiled in zip(grads[0], grads[1]):
        assert torch.equal(eager, compiled)
    # The backward graph calls the C++ gradient op.
    assert ".grad" in "".join(_ndgather_targets(record.bw_graphs[0])), record.bw_graphs[0]


def test_results_equal_the_numpy_path():
    # (Not bfloat16: NumPy reads no bfloat16 through DLPack, so the eager path refuses it.)
    for dtype in (torch.float64, torch.float16, torch.complex64):
        t = TABLE.to(dtype).requires_grad_(True)
        got = ng.gather(t, IDS).detach()
        assert got.dtype == dtype
        assert torch.equal(got, TABLE.to(dtype)[IDS])
    assert np.array_equal(ng.gather(leaf(), IDS).detach().numpy(),
                          ng.gather(TABLE.numpy(), IDS.numpy()))


def test_the_pytorch_page_examples():
    import pathlib
    import test_readme
    page = pathlib.Path(__file__).parents[3] / "docs" / "concepts" / "pytorch.md"
    namespace: dict = {}
    exec(test_readme.RUN_DOCTEST, namespace)
    namespace["check"]("\n".join(test_readme.examples(page)), page.name)


@pytest.mark.parametrize("order, works", [("import torch, ndgather as ng", True),
                                          ("import ndgather as ng, torch", False)])
def test_the_ops_are_defined_before_torch_compile_traces(order, works):
    code = order + """
f = torch.compile(lambda t, i: ng.gather(t, i) * 2, fullgraph=True)
try:
    print(f(torch.arange(6.0), torch.tensor([5, 0])).tolist())
except Exception as e:
    print("refused:", "import torch first" in str(e))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300).stdout.strip().splitlines()[-1]
    # (torch.compile reports the RuntimeError as its own Unsupported error, with its text.)
    assert out == ("[10.0, 0.0]" if works else "refused: True"), out


def test_a_result_changed_in_place_still_has_its_gradient():
    t = leaf()
    rows = ng.gather(t, IDS)
    rows += 1  # a gather's gradient reads neither its output nor params' values
    rows.sum().backward()
    theirs = leaf()
    torch.index_select(theirs, 0, IDS).sum().backward()
    assert torch.equal(t.grad, theirs.grad)


def test_inductors_cpp_wrapper_compiles_the_op():
    """``cpp_wrapper`` writes the attributes' string into C++ as it is: a line break in it
    broke that build (CppCompileError), so the string separates them by ``;``."""
    ng._torch.native()
    torch._dynamo.reset()
    with torch._inductor.config.patch(cpp_wrapper=True):
        f = torch.compile(lambda p, i: ng.gather(p, i, axis=1, bad_indices="clamp") * 2,
                          fullgraph=True)
        ids = torch.tensor([3, 0, 9])
        assert torch.equal(f(TABLE, ids), TABLE[:, ids.clamp(0, 3)] * 2)
    # And a call saved by an earlier version, its items separated by line breaks, still runs.
    old = torch.ops.ndgather.gather.native(TABLE, ids, "axis=1\nbad_indices=clamp")
    assert torch.equal(old, TABLE[:, ids.clamp(0, 3)])


def test_attributes_are_read_as_the_eager_call_reads_them():
    # A value may not carry another attribute: the op's one string separates them.
    class Hiding(str):
        def __contains__(self, item: object) -> bool:
            return False

    for smuggled in ("clamp\nbatch_dims=1", "clamp;batch_dims=1", Hiding("clamp;axis=1")):
        with pytest.raises(ValueError, match="line break or a ';'"):
            ng.gather(leaf(), IDS, bad_indices=smuggled)
    # A PyTorch scalar is its value, a float one not truncated.
    shards = [leaf()]
    rows = ng.embedding_lookup(shards, torch.tensor([1]), max_norm=torch.tensor(1.5))
    assert torch.linalg.norm(rows.detach()) <= 1.5 + 1e-6
    assert ng.gather(leaf(), IDS, axis=torch.tensor(0)).shape == (4, 4)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_and_its_gradients_equal_pytorch_own(mode):
    ids, offsets = torch.tensor([1, 5, 5, 2, 0]), torch.tensor([0, 2, 2])
    weights = torch.tensor([1.0, 2.0, 0.5, -1.0, 3.0]) if mode == "sum" else None
    up = torch.arange(12.0).reshape(3, 4) - 4.0
    got = []
    for f in (lambda t, w: ng.embedding_bag(t, ids, offsets, mode=mode, per_sample_weights=w),
              lambda t, w: torch.nn.functional.embedding_bag(ids, t, offsets, mode=mode,
                                                             per_sample_weights=w)):
        t = leaf()
        w = None if weights is None else weights.clone().requires_grad_(True)
        out = f(t, w)
        (out * up).sum().backward()
        got.append((out.detach(), t.grad, None if w is None else w.grad))
    assert torch.equal(got[0][0], got[1][0])
    # PyTorch adds a bag's rows with its BLAS's axpy and dots; ndgather in input order.
    torch.testing.assert_close(got[0][1], got[1][1], rtol=1e-6, atol=1e-6)
    if weights is not None:
        torch.testing.assert_close(got[0][2], got[1][2], rtol=1e-6, atol=1e-6)
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda t, w: (ng.embedding_bag(t, ids, offsets, mode=mode, per_sample_weights=w)
                      * up).sum(), fullgraph=True)
    t = leaf()
    w = None if weights is None else weights.clone().requires_grad_(True)
    compiled(t, w).backward()
    torch.testing.assert_close(t.grad, got[1][1], rtol=1e-6, atol=1e-6)
    if weights is not None:
        torch.testing.assert_close(w.grad, got[1][2], rtol=1e-6, atol=1e-6)
    # int32 ids with int64 offsets (a torch.tensor's default), as PyTorch promotes them.
    mixed = ng.embedding_bag(leaf(), ids.to(torch.int32), offsets, mode=mode,
                             per_sample_weights=weights)
    assert torch.equal(mixed.detach(), got[1][0])
    # Float ids are refused, not truncated, as without grad.
    with pytest.raises(TypeError):
        ng.embedding_bag(leaf(), ids.float(), offsets, mode=mode)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_sparse_gradients_are_pytorchs(mode, dtype):
    # sparse=True: each shard's gradient a sparse COO tensor of a row per id, in input order,
    # bit for bit PyTorch's (uncoalesced, as its own; a mean's scale the count's reciprocal
    # in the dtype); an optimizer that takes sparse gradients steps with it.
    w = torch.randn(7, 3).to(dtype)
    ids, offsets = torch.tensor([1, 4, 1, 6, 0, 3, 3]), torch.tensor([0, 2, 4])
    psw = torch.randn(7).to(dtype) if mode == "sum" else None
    upstream = torch.randn(3, 3).to(dtype)
    theirs = w.clone().requires_grad_()
    torch.nn.functional.embedding_bag(ids, theirs, offsets, mode=mode, sparse=True,
                                      per_sample_weights=psw).backward(upstream)
    ours = w.clone().requires_grad_()
    ng.embedding_bag(ours, ids, offsets, mode=mode, sparse=True,
                     per_sample_weights=psw).backward(upstream)
    assert ours.grad.layout == torch.sparse_coo
    assert torch.equal(ours.grad._indices(), theirs.grad._indices())
    assert torch.equal(ours.grad._values(), theirs.grad._values())
    torch.optim.SGD([ours], lr=0.1).step()
    torch.optim.SGD([theirs], lr=0.1).step()
    assert torch.equal(ours.detach(), theirs.detach())


def test_embedding_bag_sparse_with_weights_and_shards():
    w = torch.randn(8, 2)
    shards = [w[0::2].clone().requires_grad_(), w[1::2].clone().requires_grad_()]
    psw = torch.randn(4, requires_grad=True)
    ids, offsets = torch.tensor([3, 0, 5, 3]), torch.tensor([0, 1])
    out = ng.embedding_bag(shards, ids, offsets, mode="sum", per_sample_weights=psw,
                           sparse=True)
    out.sum().backward()
    # "mod" shards: ids 0 and 5 are rows 0 and 2 of shard 0 and 1 (5 // 2); 3 is shard 1's 1.
    assert [s.grad.layout for s in shards] == [torch.sparse_coo] * 2
    assert shards[0].grad._indices().tolist() == [[0]]
    assert shards[1].grad._indices().tolist() == [[1, 2, 1]]
    whole = w.clone().requires_grad_()
    psw2 = psw.detach().clone().requires_grad_()
    torch.nn.functional.embedding_bag(torch.tensor([3, 0, 5, 3]), whole, offsets, mode="sum",
                                      per_sample_weights=psw2).sum().backward()
    assert torch.equal(psw.grad, psw2.grad)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        ng.embedding_bag(shards, ids, offsets, mode="max", sparse=True)
    # torch.compile builds dense gradients only: refused in one graph, else run eagerly.
    call = lambda t: ng.embedding_bag(t, ids, offsets, sparse=True)  # noqa: E731
    with pytest.raises(Exception, match="sparse=True gives sparse gradients in eager"):
        torch.compile(call, fullgraph=True)(w.clone().requires_grad_())
    t = w.clone().requires_grad_()
    torch.compile(call)(t).sum().backward()
    assert t.grad.layout == torch.sparse_coo


def _graph_ops(f, *args):
    """The ndgather ops in the graph ``torch.compile(fullgraph=True)`` makes of ``f``."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    torch._dynamo.reset()
    torch.compile(f, backend=backend, fullgraph=True)(*args)
    return [t for g in graphs for t in _ndgather_targets(g)]


def _ndgather_targets(graph_module):
    return [str(n.target) for n in graph_module.graph.nodes if "ndgather" in str(n.target)]


def test_a_compiled_training_step_runs_the_op_then_its_gradient():
    """The forward graph that AOTAutograd traces of ``.with_grad`` calls its kernel,
    ``.native``, not ``.with_grad`` through its autograd Function again (which compiled
    code ran under no_grad, about 3 µs a call); the backward graph calls ``.grad``."""
    from functorch.compile import make_boxed_func
    from torch._functorch.aot_autograd import aot_module_simplified
    assert ng._torch.native()
    seen = {}

    def backend(gm, example_inputs):
        def compiler(role):
            def compile_graph(graph, _):
                seen[role] = _ndgather_targets(graph)
                return make_boxed_func(graph.forward)
            return compile_graph
        return aot_module_simplified(gm, example_inputs, fw_compiler=compiler("forward"),
                                     bw_compiler=compiler("backward"))
    torch._dynamo.reset()
    t = leaf()
    step = torch.compile(lambda x, i: ng.gather(x, i).pow(2).sum(), backend=backend,
                         fullgraph=True)
    step(t, IDS).backward()
    assert seen == {"forward": ["ndgather.gather.native"], "backward": ["ndgather.gather.grad"]}
    theirs = leaf()
    theirs[IDS].pow(2).sum().backward()
    assert torch.equal(t.grad, theirs.grad)


def _native(name, *inputs, attrs=""):
    """The typed op ``name``'s overload without a gradient, called directly."""
    return getattr(torch.ops.ndgather, name).native(*inputs, attrs)


def test_compiled_code_calls_the_cpp_kernel_where_no_gradient_flows():
    assert ng._torch.native(), "this machine has a C++ compiler: the kernel must build"
    assert _graph_ops(lambda t, i: ng.gather(t, i) * 2, TABLE, IDS) == [
        "ndgather.gather.native"]
    with torch.no_grad():
        assert _graph_ops(lambda t, i: ng.gather(t, i), leaf(), IDS) == [
            "ndgather.gather.native"]
    # Where a gradient flows, the same kernel with the op's autograd formula.
    assert _graph_ops(lambda t, i: ng.gather(t, i), leaf(), IDS) == [
        "ndgather.gather.with_grad"]
    # Each op its own, its schema from the registry's signature: a list for a table's
    # shards, none for an input left out.
    bag = _graph_ops(lambda t, i: ng.embedding_bag([t, t], i, torch.tensor([0, 1])), TABLE,
                     IDS)
    assert bag == ["ndgather.embedding_bag.native"]
    schema = str(torch.ops.ndgather.embedding_bag.native._schema)
    assert schema.startswith("ndgather::embedding_bag.native(Tensor[] weight, Tensor input, "
                             "Tensor? offsets, Tensor? per_sample_weights, str attrs)"), schema
    # A broadcast view: the Python body reads it in place (the C++ kernel would copy it).
    wide = torch.zeros(1, 64).expand(4096, 64)
    assert _graph_ops(lambda t, i: ng.gather(t, i), wide, IDS) == ["ndgather.op"]
    assert _graph_ops(lambda t, i: ng.gather(t, i), wide.requires_grad_(True), IDS) == [
        "ndgather.op"]
    # A program torch.export saves keeps the op with its gradient, which runs without the
    # C++ kernel's library.

    class Lookup(torch.nn.Module):
        def forward(self, t, i):
            return ng.gather(t, i) * 2
    program = torch.export.export(Lookup(), (TABLE, IDS))
    assert [str(n.target) for n in program.graph.nodes
            if "ndgather" in str(n.target)] == ["ndgather.op.default"]
    w = leaf()
    program.module()(w, IDS).sum().backward()
    want = leaf()
    (torch.index_select(want, 0, IDS) * 2).sum().backward()
    assert torch.equal(w.grad, want.grad)
    # The C++ op itself has no gradient, and says so.
    with pytest.raises(RuntimeError, match="derivative for ndgather::gather is not"):
        _native("gather", leaf(), IDS).sum().backward()
    torch._dynamo.reset()
    f = torch.compile(lambda t, i: ng.take_along_axis(t, i, axis=1) + 1, fullgraph=True)
    order = torch.argsort(TABLE, dim=1)
    assert torch.equal(f(TABLE, order), torch.take_along_dim(TABLE, order, dim=1) + 1)


def _attrs(name, attrs):
    """The custom op's one string of attributes."""
    return ng._torch._attrs_text(name, tuple(attrs.items()), False)


KERNEL_CASES = [
    ("gather", lambda t: (t, IDS), {}),
    ("gather", lambda t: (t.t(), torch.tensor([[3, 0]] * 4)),
     {"axis": 1, "batch_dims": 1, "bad_indices": "clamp"}),
    ("gather_nd", lambda t: (t, torch.tensor([[5, 3], [0, 1]], dtype=torch.int32)), {}),
    ("take_along_axis", lambda t: (t, torch.tensor([[2, 0]] * 6)), {"axis": 1}),
    ("tensor_scatter_nd_update", lambda t: (t, torch.tensor([[1], [4]]), t[:2]), {}),
    ("gather", lambda t: (t, torch.tensor([0, 9])), {"bad_indices": "fill"}),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16,
                                   torch.complex64, torch.int8, torch.uint8, torch.int64,
                                   torch.bool, torch.uint16, torch.float8_e4m3fn])
def test_the_cpp_kernel_equals_the_python_op(dtype):
    ng._torch.native()
    table = TABLE.to(dtype) if dtype is not torch.uint16 else TABLE.abs().to(dtype)
    for name, make, attrs in KERNEL_CASES:
        tensors = list(make(table))
        call = (tensors, [1] * len(tensors), name, _attrs(name, attrs))
        ours = _native(name, *tensors, attrs=call[3])
        if dtype is torch.float8_e4m3fn:
            # The Python op reads no float8 (NumPy has none); these ops move bytes (the fill,
            # float8's NaN, is not a byte's default).
            if attrs.get("bad_indices") == "fill":
                assert ours[1].isnan().all()
                continue
            bytes_ = [t.view(torch.uint8) if t.dtype is dtype else t for t in tensors]
            theirs = torch.ops.ndgather.op(bytes_, *call[1:]).view(dtype)
        else:
            theirs = torch.ops.ndgather.op(*call)
        assert ours.dtype == theirs.dtype == dtype and ours.shape == theirs.shape, name
        assert torch.equal(ours.view(torch.uint8), theirs.view(torch.uint8)), (name, dtype)
    # Views whose values are not their memory's: a conjugate one, and a negative one.
    c = torch.complex(TABLE, TABLE + 1)
    for view in (c.conj(), torch._neg_view(c), torch._neg_view(c.conj())):
        assert torch.equal(_native("gather", view, IDS), view.resolve_conj()
                           .resolve_neg()[IDS])


def test_the_op_with_a_gradient_records_one_only_where_autograd_would():
    """``with_grad``'s result has a ``grad_fn`` only where autograd records one;
    under ``no_grad`` a fake tensor still reaches its fake kernel (the Function calls the op
    through the dispatcher); forward-mode AD and functorch's transforms are refused, as a
    C++ autograd Function refuses them, never given zero tangents."""
    import torch.autograd.forward_ad as fwAD
    from torch._subclasses.fake_tensor import FakeTensorMode
    ng._torch.native()
    op = torch.ops.ndgather.gather.with_grad
    table = leaf()
    call = (table, IDS, "")
    with torch.no_grad():
        out = op(*call)
    assert out.grad_fn is None and not out.requires_grad
    assert torch.equal(out, TABLE[IDS])
    out = op(TABLE, IDS, "")
    assert out.grad_fn is None and torch.equal(out, TABLE[IDS])
    out = op(*call)
    assert out.grad_fn is not None
    out.sum().backward()
    assert torch.equal(table.grad, torch.zeros_like(TABLE).index_add_(
        0, IDS, torch.ones(len(IDS), TABLE.shape[1])))
    with FakeTensorMode() as mode, torch.no_grad():
        fake = op(mode.from_tensor(table), mode.from_tensor(IDS), "")
    assert fake.shape == (len(IDS), TABLE.shape[1])
    with fwAD.dual_level():
        dual = fwAD.make_dual(TABLE.clone(), torch.ones_like(TABLE))
        for grad_mode in (True, False):
            with torch.set_grad_enabled(grad_mode), pytest.raises(RuntimeError, match="jvp"):
                op(dual, IDS, "")
    with pytest.raises(RuntimeError, match="functorch"):
        torch.func.jvp(lambda t: op(t, IDS, ""), (TABLE,),
                       (torch.ones_like(TABLE),))


@pytest.mark.parametrize("name, make, attrs", KERNEL_CASES[:5])
def test_opcheck_of_the_cpp_kernel(name, make, attrs):
    ng._torch.native()
    typed = getattr(torch.ops.ndgather, name)
    text = _attrs(name, attrs)
    torch.library.opcheck(typed.native, (*make(TABLE), text))
    # And under the op's gradient formula, with a table that requires grad, and the
    # gradient op.
    tensors = list(make(leaf()))
    torch.library.opcheck(typed.with_grad, (*tensors, text))
    out = typed.native(*tensors, text).detach()
    torch.library.opcheck(typed.grad, (*[t.detach() for t in tensors], out,
                                       torch.ones_like(out), text))


def test_the_cpp_kernels_errors_are_the_builtin_classes_of_ndgathers():
    ng._torch.native()
    torch._dynamo.reset()
    f = torch.compile(lambda t, i: ng.gather(t, i), fullgraph=True)
    with pytest.raises(ValueError, match=r"indices\[1\] = 9 is not in \[0, 6\)") as e:
        f(TABLE, torch.tensor([0, 9]))
    assert type(e.value) is ValueError  # the built-in class, not ndgather's subclass
    with pytest.raises(TypeError, match="indices"):
        _native("gather", TABLE, torch.tensor([0.5]))
    with pytest.raises(TypeError, match="dtype ComplexHalf, which ndgather does not read"):
        _native("gather", TABLE.to(torch.complex32), IDS)
    with pytest.raises(ValueError, match='attribute "axis" takes an integer'):
        _native("gather", TABLE, IDS, attrs="axis=x")
    # A line without '=' is a name with empty text, as the Python op reads it.
    with pytest.raises(ValueError, match='attribute "axis" takes an integer, got \'\''):
        _native("gather", TABLE, IDS, attrs="axis")
    with pytest.raises(ValueError, match='attribute "axis" takes an integer, got \'\''):
        torch.ops.ndgather.op([TABLE, IDS], [1, 1], "gather", "axis")
    # The C ABI's strings end at a NUL: refused, not cut.
    with pytest.raises(ValueError, match="NUL character in the op's attributes"):
        _native("gather", TABLE, IDS, attrs="axis=1\0junk")
    # A size past the address space: the core's error, before PyTorch is asked.
    with pytest.raises(ValueError, match="overflows the address space"):
        _native("unsorted_segment_sum", TABLE, torch.zeros(6, dtype=torch.int64),
                attrs=f"num_segments={2 ** 62}")
    with pytest.raises(IndexError, match="integer"):
        _native("take_along_axis", TABLE, torch.tensor([[0.5]]), attrs="axis=1")
    with pytest.raises(RuntimeError, match="reduce argument must be"):
        _native("scatter_reduce", TABLE, torch.tensor([[0]]), TABLE[:1],
                attrs="dim=0\nreduce=average")
    # None for a required tensor (PyTorch passes an undefined one), named.
    with pytest.raises(TypeError, match="input tensor 1 is None, where the op takes a tensor"):
        _native("gather", TABLE, None)
    up = torch.ones(4, 4)
    with pytest.raises(TypeError, match="input tensor 2 is None"):
        torch.ops.ndgather.gather.grad(TABLE, IDS, None, up, "")
    # A list input's shards, each checked: the second is of a dtype the core does not read.
    with pytest.raises(TypeError, match="input tensor 1 is of dtype ComplexHalf"):
        _native("embedding_lookup", [TABLE, TABLE.to(torch.complex32)], IDS)


def test_views_are_read_as_their_values_on_every_path():
    """A negative view's memory is not its values (PyTorch's DLPack export gives the memory
    as it is), nor a conjugate one's: each path reads the values, contiguous or not; compiled,
    as PyTorch's own op compiled alike reads them (inductor reads a negative view's memory)."""
    c = torch.complex(TABLE, TABLE + 10)
    views = [torch._neg_view(TABLE), torch._neg_view(TABLE)[:, ::2], c.conj().imag,
             c.conj(), c[:, ::2].conj()]
    ng._torch.native()
    torch._dynamo.reset()
    compiled = torch.compile(lambda t, i: ng.gather(t, i), fullgraph=True, dynamic=False)
    theirs = torch.compile(lambda t, i: torch.index_select(t, 0, i), fullgraph=True,
                           dynamic=False)
    for view in views:
        want = torch.index_select(view, 0, IDS)
        assert torch.equal(torch.as_tensor(ng.gather(view, IDS)), want)  # through DLPack
        # The C++ kernel or the Python body.
        assert torch.equal(compiled(view, IDS), theirs(view, IDS))
        if view.is_floating_point():  # through the custom op, eagerly
            grad_view = view.detach().clone().requires_grad_(True)
            assert torch.equal(ng.gather(torch._neg_view(grad_view), IDS).detach(),
                               -torch.index_select(grad_view.detach(), 0, IDS))
    # Written into, such a view would read back changed, or a resolved copy be lost: refused.
    for out in (torch._neg_view(torch.zeros(4, 4)), torch.zeros(4, 4, dtype=c.dtype).conj()):
        with pytest.raises(ValueError, match="memory is not its values"):
            ng.gather(TABLE.to(out.dtype), IDS, out=out)
    with pytest.raises(ValueError, match="negative view of a PyTorch tensor"):
        ng.put_along_axis(torch._neg_view(torch.zeros(3)), torch.tensor([1]), 5.0, axis=0)


def test_dual_tensors_carry_their_tangents_or_are_refused():
    """Forward AD's dual tensors: a linear op's tangent is the op on the tangents (a table's
    shard's, the updates'), a max's its winner's; a ``max_norm``'s, and a write into
    ``out``, which would leave its tangent as it was, are refused, never dropped."""
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        dual = fwAD.make_dual(TABLE.clone(), torch.ones_like(TABLE))
        assert torch.equal(fwAD.unpack_dual(ng.gather(dual, IDS)).tangent,
                           torch.ones(len(IDS), 4))
        shards = fwAD.unpack_dual(ng.embedding_lookup([TABLE, dual], torch.tensor([0, 1])))
        assert torch.equal(shards.tangent, torch.tensor([[0.0] * 4, [1.0] * 4]))
        updates = fwAD.make_dual(TABLE[:1].clone(), torch.full((1, 4), 2.0))
        added = ng.tensor_scatter_nd_add(TABLE, torch.tensor([[1]]), updates)
        assert torch.equal(fwAD.unpack_dual(added).tangent[1], torch.full((4,), 2.0))
        # A max's tangent is its winner's (routed: along the segment sum's routes).
        top = ng.unsorted_segment_max(dual * torch.arange(6.0)[:, None],
                                      torch.tensor([0, 1, 0, 1, 0, 1]), 2)
        assert torch.equal(fwAD.unpack_dual(top).tangent, torch.tensor([[4.0] * 4, [5.0] * 4]))
        with pytest.raises(RuntimeError, match="not linear there"):
            ng.embedding_lookup(dual, torch.tensor([0, 1]), max_norm=1.0)
        with pytest.raises(RuntimeError, match=r"forward-mode AD \(jvp\) is not"):
            ng.gather(TABLE, IDS, out=fwAD.make_dual(torch.zeros(4, 4), torch.ones(4, 4)))
    assert torch.equal(ng.gather(TABLE, IDS), TABLE[IDS])  # outside a dual level, as before


def test_the_cpp_library_leaves_other_ops_of_the_namespace_alone():
    """The C++ library gives its kernels only to the typed ops of the registry, with the
    schemas ``ndgather._torch`` writes: another library's op in the namespace keeps its own
    kernel, or has none, rather than running ndgather's on arguments it never read."""
    code = """
import torch, ndgather as ng
ng._torch.define()
lib = torch.library.Library("ndgather", "FRAGMENT")
lib.define("mine.native(Tensor x, str attrs) -> Tensor")
lib.impl("mine.native", lambda x, attrs: x * 10, "CPU")
lib.define("noattr.native(Tensor x) -> Tensor")
lib.define("gather.other(Tensor x, str attrs) -> Tensor")
assert ng._torch.native()
print(torch.ops.ndgather.mine.native(torch.ones(2), "").tolist())
for call in (lambda: torch.ops.ndgather.noattr.native(torch.ones(2)),
             lambda: torch.ops.ndgather.gather.other(torch.ones(2), "")):
    try:
        call()
    except NotImplementedError as e:
        print("no kernel:", "CPU" in str(e))
print(torch.ops.ndgather.gather.native(torch.arange(4.0), torch.tensor([3]), "").tolist())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.split("\n")[-5:] == [
        "[10.0, 10.0]", "no kernel: True", "no kernel: True", "[3.0]", ""], out.stderr[-2000:]


def test_without_a_compiler_compiled_code_calls_the_python_body(tmp_path):
    code = """
import warnings, torch, ndgather as ng
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    native = ng._torch.native()
# (Inductor compiles C++ too: the graph runs as it is traced.)
f = torch.compile(lambda t, i: ng.gather(t, i) * 2, fullgraph=True, backend="aot_eager")
said = any("through their Python bodies" in str(x.message) for x in w)
t = torch.arange(6.0, requires_grad=True)
try:  # the Python body has no gradient either, and says so
    torch.ops.ndgather.gather.native(t, torch.tensor([1]), "").sum().backward()
    raised = False
except RuntimeError as e:
    raised = "derivative for ndgather::gather is not implemented" in str(e)
g = torch.compile(lambda t, i: (ng.gather(t, i) ** 2).sum(), fullgraph=True, backend="aot_eager")
g(t, torch.tensor([5, 0, 5])).backward()
try:  # nor the gradient op
    up = torch.ones(1, requires_grad=True)
    torch.ops.ndgather.gather.grad(t.detach(), torch.tensor([1]), up, up, "")[0].sum().backward()
    raised = False
except RuntimeError as e:
    raised = raised and "derivative for ndgather::gather is not implemented" in str(e)
import torch.autograd.forward_ad as fwAD
with fwAD.dual_level():  # no tangent dropped: the Python body refuses a dual tensor too
    dual = fwAD.make_dual(torch.arange(6.0), torch.ones(6))
    try:
        torch.ops.ndgather.gather.with_grad(dual, torch.tensor([1]), "")
        raised = False
    except RuntimeError as e:
        raised = raised and "forward-mode AD (jvp) is not implemented" in str(e)
# torch.func's transforms on the Python bodies: per-sample gradients batch the gradient op.
loss = lambda t, i: (ng.gather(t, i) ** 2).sum()
per_sample = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(
    torch.arange(6.0), torch.tensor([[5], [1]]))
# A second derivative of a linear op (its gradient's own function) on the Python bodies;
second = torch.func.grad(lambda t: torch.func.grad(loss)(t, torch.tensor([5])).sum())(
    torch.arange(6.0))
seg = lambda t: (ng.unsorted_segment_max(t, torch.tensor([0, 1, 0, 1, 0, 1]), 2) ** 2).sum()
try:  # and none of a max, not a zero one
    torch.func.grad(lambda t: torch.func.grad(seg)(t).sum())(t.detach())
    raised = False
except RuntimeError as e:
    raised = raised and "derivative for ndgather::unsorted_segment_max is not" in str(e)
print(native, said, raised, f(torch.arange(6.0), torch.tensor([5, 0])).tolist(), t.grad.tolist(),
      per_sample.sum(1).tolist(), second.tolist())
"""
    env = dict(os.environ, CXX=str(tmp_path / "no-such-compiler"),
               NDGATHER_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.strip().splitlines()[-1:] == [
        "False True True [10.0, 0.0] [0.0, 0.0, 0.0, 0.0, 0.0, 20.0] [10.0, 2.0] "
        "[0.0, 0.0, 0.0, 0.0, 0.0, 2.0]"], \
        out.stderr[-2000:]


def test_without_a_compiler_eager_autograd_keeps_the_generic_op_silently(tmp_path):
    """Eager autograd tries the C++ build on its first call; where it cannot be built, the
    generic op runs, as it always did, with no warning (one raised as an error would fail
    every call) and no second try."""
    code = """
import warnings, torch, ndgather as ng
warnings.simplefilter("error")
t = torch.arange(6.0, requires_grad=True)
names = [ng.gather(t, torch.tensor([1])).grad_fn.name() for _ in range(3)]
print(ng._torch._native, all("ndgather_op" in n for n in names))
"""
    env = dict(os.environ, CXX=str(tmp_path / "no-such-compiler"),
               NDGATHER_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.strip().splitlines()[-1:] == ["False True"], out.stderr[-2000:]


def test_tensors_on_several_devices_are_refused_not_faked():
    # A tensor on `meta` sends the call to the fake implementation, which must not answer a
    # CPU tensor's call with uninitialised memory.
    ng._torch.native()
    ids, up = torch.tensor([1, 0]), torch.ones(2, 4)
    with pytest.raises(RuntimeError, match="same device, but found at least two devices"):
        torch.ops.ndgather.gather.grad(TABLE, ids, up, up.to("meta"), "")
    with pytest.raises(RuntimeError, match="same device, but found at least two devices"):
        _native("gather", TABLE, ids.to("meta"))
    meta = _native("gather", TABLE.to("meta"), ids.to("meta"))
    assert meta.device.type == "meta" and meta.shape == (2, 4)


def test_a_bad_embedding_bag_mode_is_refused_in_pytorchs_words():
    ids, offsets = torch.tensor([1, 0]), torch.tensor([0])
    with pytest.raises(ValueError) as theirs:
        torch.nn.functional.embedding_bag(ids, TABLE, offsets, mode="bogus")
    for table in (TABLE, leaf()):  # eagerly and through the custom op
        with pytest.raises(ValueError) as ours:
            ng.embedding_bag(table, ids, offsets, mode="bogus")
        assert str(ours.value) == str(theirs.value)


def test_eager_autograd_calls_the_cpp_kernel_and_keeps_ndgathers_errors():
    """An eager call that autograd records runs the typed op's C++ kernel with its C++
    gradient formula (about 90 µs less a call than the generic op's Python); a strided view,
    which the kernel would copy, takes the generic op. An error is ndgather's own class, as
    before: the generic op runs the call again to raise it."""
    assert ng._torch.native()
    t = leaf()
    rows = ng.gather(t, IDS)
    assert "WithGrad" in rows.grad_fn.name()
    rows.pow(2).sum().backward()
    theirs = leaf()
    theirs[IDS].pow(2).sum().backward()
    assert torch.equal(t.grad, theirs.grad)
    view = leaf().t()
    assert "ndgather_op" in ng.gather(view, torch.tensor([1, 0])).grad_fn.name()
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[0\] = 9 is not in \[0, 6\)"):
        ng.gather(leaf(), torch.tensor([9]))
    with pytest.raises(ng.InvalidArgumentError):
        ng.unsorted_segment_sum(leaf(), torch.tensor([0, 1]), 2)


def test_eager_autograd_under_checkpointing_tracing_and_dual_tensors():
    """Activation checkpointing's recomputation stops at its last saved tensor by raising
    through the op's kernel: that signal passes, not taken for the op's error. A traced
    module records the generic op (its graph may not depend on the grad mode). A dual
    tensor that requires grad, under a loss whose upstream gradient is dual too."""
    from torch.utils.checkpoint import checkpoint
    import torch.autograd.forward_ad as fwAD
    weight = torch.nn.Parameter(torch.linspace(-1.0, 1.0, 16).reshape(4, 4))
    src, dst = torch.tensor([0, 1, 2, 3, 0]), torch.tensor([1, 2, 3, 0, 2])

    def layer(x, gather, segment_sum):
        return x + segment_sum(gather(torch.relu(x @ weight), src), dst, 4)
    ours, theirs = (leaf()[:4].detach().requires_grad_(True) for _ in range(2))
    checkpoint(layer, ours, ng.gather, ng.unsorted_segment_sum,
               use_reentrant=False).sum().backward()
    layer(theirs, lambda t, i: t[i],
          lambda d, i, n: torch.zeros(n, d.shape[1]).index_add(0, i, d)).sum().backward()
    assert torch.allclose(ours.grad, theirs.grad)

    class Lookup(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.nn.Parameter(TABLE.clone())

        def forward(self, ids):
            return ng.gather(self.table, ids)
    traced = torch.jit.trace(Lookup(), (IDS,))
    assert torch.equal(traced(IDS), TABLE[IDS])
    assert "ndgather::op" in str(traced.graph)

    table, ref = (TABLE.double().requires_grad_(True) for _ in range(2))
    with fwAD.dual_level():
        out = ng.gather(fwAD.make_dual(table, torch.ones_like(table)), IDS)
        torch.sin(out).sum().backward()
    torch.sin(ref[IDS]).sum().backward()
    assert torch.allclose(table.grad, ref.grad)


@pytest.mark.parametrize("case", ["gather", "shards", "bag", "segment_max", "strided",
                                  "sliced shards"])
def test_pytorchs_legacy_vmap_batches_the_typed_ops(case):
    """``jacobian(vectorize=True)``, ``hessian(vectorize=True)`` and gradcheck's batched
    gradients run the gradient op under PyTorch's legacy vmap, whose own fallback takes no
    list of tensors (the gradient op's result, an embedding's shards): the op's rule, once
    per element, gives what the loop does."""
    ids = torch.tensor([[5, 1], [1, 0]])
    f, reference = {
        "gather": (lambda t: ng.gather(t, ids), lambda t: t[ids]),
        "shards": (lambda t: ng.embedding_lookup([t[:3], t[3:]], ids, partition_strategy="div"),
                   lambda t: t[ids]),
        "bag": (lambda t: ng.embedding_bag(t, ids, mode="mean"), lambda t: t[ids].mean(1)),
        # (Strided views take the generic ops, whose rule it is too.)
        "strided": (lambda t: ng.gather(t.t(), torch.tensor([3, 1])), lambda t: t.t()[[3, 1]]),
        "sliced shards": (lambda t: ng.embedding_lookup([t[0::2], t[1::2]], ids),
                          lambda t: t[ids]),
        "segment_max": (lambda t: ng.unsorted_segment_max(t, torch.tensor([0, 1, 0, 1, 2, 1]),
                                                          3),
                        lambda t: torch.zeros(3, 4, dtype=t.dtype).index_reduce(
                            0, torch.tensor([0, 1, 0, 1, 2, 1]), t, "amax",
                            include_self=False)),
    }[case]
    x = _double(TABLE)
    jacobian = torch.autograd.functional.jacobian
    want = jacobian(reference, x)
    assert torch.equal(jacobian(f, x, vectorize=True), want)
    assert torch.equal(jacobian(f, x), want)
    assert torch.autograd.gradcheck(f, (x,), check_batched_grad=True)
    hessian = torch.autograd.functional.hessian
    loss = lambda t: (f(t) ** 3).sum()
    if case == "segment_max":  # (no second derivative: refused, not zero)
        with pytest.raises(RuntimeError, match="derivative for ndgather::"):
            hessian(loss, x, vectorize=True)
        return
    assert torch.allclose(hessian(loss, x, vectorize=True),
                          hessian(lambda t: (reference(t) ** 3).sum(), x))


def test_second_derivatives_of_strided_views_through_the_generic_op():
    """A strided view takes the generic op (which reads it in place): its gradient has the
    same derivative as the typed op's, refused likewise where the op is not linear."""
    ids = torch.tensor([[0, 1], [2, 0], [2, 1], [4, 0]])[:, 0]
    assert not ids.is_contiguous()
    answers = []
    for f in (lambda w: ng.gather(w, ids), lambda w: w[ids.contiguous()],
              lambda w: ng.gather(w.t(), torch.tensor([1, 0, 1])),
              lambda w: w.t()[[1, 0, 1]]):
        w = _double(TABLE[:5, :3])
        g, = torch.autograd.grad((f(w) ** 3).sum(), w, create_graph=True)
        answers.append(torch.autograd.grad((g ** 2).sum(), w)[0])
    assert torch.allclose(answers[0], answers[1]) and torch.allclose(answers[2], answers[3])
    assert torch.autograd.gradgradcheck(lambda w: ng.gather(w.t(), torch.tensor([1, 0, 1])),
                                        (_double(TABLE[:5, :3]),))
    w = _double(TABLE[:3, :3])
    g, = torch.autograd.grad((ng.unsorted_segment_max(w.t(), torch.tensor([0, 1, 0]), 2) ** 2)
                             .sum(), w, create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for ndgather::unsorted_segment_max is "
                                           "not implemented: ndgather differentiates"):
        torch.autograd.grad(g.sum(), w)


def test_a_sparse_bags_gradient_refuses_create_graph():
    w = _double(TABLE)
    loss = (ng.embedding_bag(w, torch.tensor([[0, 1]]), mode="sum", sparse=True) ** 2).sum()
    with pytest.raises(RuntimeError, match="sparse=True is not implemented.*sparse=False"):
        torch.autograd.grad(loss, w, create_graph=True)
    g, = torch.autograd.grad((ng.embedding_bag(w, torch.tensor([[0, 1]]), mode="sum",
                                                 sparse=True) ** 2).sum(), w)
    assert g.is_sparse


def test_forward_over_reverse_outside_torch_func():
    """A backward inside a dual level, on duals: the gradient's tangent is the Hessian times
    the tangent (never dropped), as PyTorch's own ops give; refused where the op is not
    linear. ``hessian(outer_jacobian_strategy="forward-mode")`` runs so."""
    import torch.autograd.forward_ad as fwAD
    from torch.autograd.functional import hessian
    ids = torch.tensor([0, 2, 2])
    x = _double(TABLE[:3, :2]).detach()
    ours = hessian(lambda t: (ng.gather(t, ids) ** 3).sum(), x, vectorize=True,
                   outer_jacobian_strategy="forward-mode")
    theirs = hessian(lambda t: (torch.index_select(t, 0, ids) ** 3).sum(), x, vectorize=True,
                     outer_jacobian_strategy="forward-mode")
    assert torch.allclose(ours, theirs) and ours.abs().sum() > 0
    tangents = []
    for g in (lambda d: ng.gather(d, ids), lambda d: torch.index_select(d, 0, ids)):
        with fwAD.dual_level():
            leaf = x.clone().requires_grad_(True)
            dual = fwAD.make_dual(leaf, torch.ones_like(leaf))
            grad, = torch.autograd.grad((g(dual) ** 3).sum(), leaf, create_graph=True)
            tangents.append(fwAD.unpack_dual(grad).tangent)
    assert tangents[0] is not None and torch.allclose(tangents[0], tangents[1])
    with fwAD.dual_level():
        leaf = x.clone().requires_grad_(True)
        dual = fwAD.make_dual(leaf, torch.ones_like(leaf))
        with pytest.raises(RuntimeError, match="not implemented"):
            out = ng.unsorted_segment_max(dual, torch.tensor([0, 1, 0]), 2)
            torch.autograd.grad((out ** 3).sum(), leaf, create_graph=True)


def test_a_scatter_adds_gradient_of_dropped_updates_is_zero_under_fill():
    idx = torch.tensor([[0], [7], [-1]])
    t, u = _double(torch.zeros(4, 2)), _double(torch.zeros(3, 2))
    y = ng.tensor_scatter_nd_add(t, idx, u, bad_indices="fill")
    _, du = torch.autograd.grad(y, [t, u], torch.ones(4, 2, dtype=torch.float64))
    assert torch.equal(du, torch.tensor([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]],
                                        dtype=torch.float64))
    assert torch.autograd.gradcheck(
        lambda t, u: ng.tensor_scatter_nd_add(t, idx, u, bad_indices="fill"),
        (_double(TABLE[:4, :2]), _double(TABLE[:3, :2])))
