"""ndgather's ops under PyTorch's function transforms (issue 55): ``torch.func.vmap``,
``grad``, ``vjp``, ``jacrev`` and per-sample gradients (``vmap`` of ``grad``), each against
the same op called eagerly, once per element of the batch (for ``vmap``) or through
PyTorch's eager autograd (for the gradients), which the other files check against
PyTorch's own ops.

PyTorch runs with ``scripts/test.sh --frameworks``; elsewhere this file is skipped.
"""

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed: run "
                            "scripts/test.sh --frameworks")
import ndgather as ng  # noqa: E402

func = torch.func

TABLE = torch.arange(24, dtype=torch.float32).reshape(6, 4) * 0.5 - 3.0

#: (what, the op on its inputs, the inputs: floats first, then indices): one per op of the
#: torch front end, and the gathers' attributes that the batching rule rewrites.
CASES = [
    ("gather", lambda t, i: ng.gather(t, i), (TABLE, torch.tensor([5, 1, 1, 0]))),
    ("gather axis=1", lambda t, i: ng.gather(t, i, axis=1),
     (TABLE, torch.tensor([[3, 0], [1, 1]]))),
    ("gather axis=-1 batch_dims=1",
     lambda t, i: ng.gather(t, i, axis=-1, batch_dims=1, bad_indices="clamp"),
     (TABLE, torch.tensor([[3, 0, 9]] * 6))),
    ("gather batch_dims=-1", lambda t, i: ng.gather(t, i, batch_dims=-1),
     (TABLE, torch.tensor([[3, 0, 2]] * 6))),
    ("gather fill", lambda t, i: ng.gather(t, i, bad_indices="fill", fill_value=7.5),
     (TABLE, torch.tensor([0, 9, 2]))),
    ("gather_nd", lambda t, i: ng.gather_nd(t, i),
     (TABLE, torch.tensor([[5, 3], [0, 1], [2, 2]]))),
    ("gather_nd batch_dims=1", lambda t, i: ng.gather_nd(t, i, batch_dims=1),
     (TABLE, torch.tensor([[[3]], [[0]], [[1]], [[2]], [[0]], [[3]]]))),
    ("take_along_axis", lambda t, i: ng.take_along_axis(t, i, axis=1),
     (TABLE, torch.tensor([[2, 0]] * 6))),
    ("take_along_axis axis=-2", lambda t, i: ng.take_along_axis(t, i, axis=-2),
     (TABLE, torch.tensor([[2, 0, 5, 1]]))),
    ("embedding_lookup", lambda t, i: ng.embedding_lookup(t, i),
     (TABLE, torch.tensor([[5, 0], [5, 3]]))),
    ("embedding_lookup shards",
     lambda a, b, i: ng.embedding_lookup([a, b], i),
     (TABLE[0::2].clone(), TABLE[1::2].clone(), torch.tensor([[5, 0], [5, 3]]))),
    ("embedding_bag", lambda t, w, i, o: ng.embedding_bag(t, i, o, mode="sum",
                                                           per_sample_weights=w),
     (TABLE, torch.tensor([1.0, 2.0, 0.5, -1.0, 3.0]), torch.tensor([1, 5, 5, 2, 0]),
      torch.tensor([0, 2, 2]))),
    ("unsorted_segment_sum", lambda t, i: ng.unsorted_segment_sum(t, i, 4),
     (TABLE, torch.tensor([2, 0, 2, 1, 1, 0]))),
    ("unsorted_segment_max", lambda t, i: ng.unsorted_segment_max(t, i, 3),
     (TABLE, torch.tensor([2, 0, 2, -1, 1, 0]))),
    ("gather_segment", lambda t, s, d: ng.gather_segment(t, s, d, 3),
     (TABLE, torch.tensor([0, 5, 5, 2, 1]), torch.tensor([2, 0, 2, 2, 1]))),
    ("tensor_scatter_nd_update", lambda t, u, i: ng.tensor_scatter_nd_update(t, i, u),
     (TABLE, torch.arange(8.0).reshape(2, 4), torch.tensor([[5], [0]]))),
    ("scatter_nd", lambda u, i: ng.scatter_nd(i, u, [8, 4]),
     (TABLE, torch.tensor([[7], [0], [7], [2], [3], [1]]))),
    ("unsorted_segment_mean", lambda t, i: ng.unsorted_segment_mean(t, i, 4),
     (TABLE, torch.tensor([2, 0, 2, 1, 1, 0]))),
    ("unsorted_segment_min", lambda t, i: ng.unsorted_segment_min(t, i, 3),
     (TABLE, torch.tensor([2, 0, 2, -1, 1, 0]))),
    ("unsorted_segment_prod", lambda t, i: ng.unsorted_segment_prod(t, i, 3),
     (TABLE, torch.tensor([2, 0, 2, 1, 1, 0]))),
    ("unsorted_segment_sqrt_n", lambda t, i: ng.unsorted_segment_sqrt_n(t, i, 3),
     (TABLE, torch.tensor([2, 0, 2, 1, 1, 0]))),
    ("segment_sum", lambda t, i: ng.segment_sum(t, i),
     (TABLE, torch.tensor([0, 0, 1, 3, 3, 3]))),
    ("segment_max", lambda t, i: ng.segment_max(t, i),
     (TABLE, torch.tensor([0, 0, 1, 3, 3, 3]))),
    ("tensor_scatter_nd_add", lambda t, u, i: ng.tensor_scatter_nd_add(t, i, u),
     (TABLE, torch.arange(8.0).reshape(2, 4), torch.tensor([[5], [5]]))),
    ("tensor_scatter_nd_sub", lambda t, u, i: ng.tensor_scatter_nd_sub(t, i, u),
     (TABLE, torch.arange(8.0).reshape(2, 4), torch.tensor([[5], [0]]))),
    ("tensor_scatter_nd_min", lambda t, u, i: ng.tensor_scatter_nd_min(t, i, u),
     (TABLE, torch.arange(8.0).reshape(2, 4) - 4.0, torch.tensor([[5], [0]]))),
    ("tensor_scatter_nd_max", lambda t, u, i: ng.tensor_scatter_nd_max(t, i, u),
     (TABLE, torch.arange(8.0).reshape(2, 4) - 4.0, torch.tensor([[5], [0]]))),
    ("take", lambda t, i: ng.take(t, i, axis=1), (TABLE, torch.tensor([3, 0, 3]))),
    ("scatter_reduce amax", lambda t, s, i: ng.scatter_reduce(t, 0, i, s, "amax"),
     (TABLE, torch.tensor([[2.0, 0.0, -1.0, 3.0], [2.0, 1.5, 0.0, 0.0]]),
      torch.tensor([[1, 0, 5, 1], [1, 1, 0, 2]]))),
]

IDS = [c[0] for c in CASES]


def _floats(inputs):
    return [k for k, x in enumerate(inputs) if x.is_floating_point()]


def _batch(x, size=3):
    """A batch of ``size`` versions of ``x``: floats scaled, indices the same (their values
    stay valid)."""
    if x.is_floating_point():
        return torch.stack([x * (b + 1) - b for b in range(size)])
    return torch.stack([x] * size)


def _stacked(f, batched, in_dims):
    size = next(x.shape[d] for x, d in zip(batched, in_dims) if d is not None)
    return torch.stack([f(*(x if d is None else x.select(d, b)
                            for x, d in zip(batched, in_dims))) for b in range(size)])


@pytest.mark.parametrize("what, f, inputs", CASES, ids=IDS)
def test_vmap_equals_the_op_per_element(what, f, inputs):
    """Each input batched alone, and all at once; at dimension 0 and at the last."""
    n = len(inputs)
    for batched_at in [*([k] for k in range(n)), list(range(n))]:
        for where in (0, -1):
            batched = [_batch(x).movedim(0, where) if k in batched_at else x
                       for k, x in enumerate(inputs)]
            in_dims = tuple(where if k in batched_at else None for k in range(n))
            got = func.vmap(f, in_dims=in_dims)(*batched)
            want = _stacked(f, batched, [d if d is None else d % b.dim()
                                         for d, b in zip(in_dims, batched)])
            assert got.dtype == want.dtype and torch.equal(got, want), (what, in_dims)


def _eager_grads(f, inputs, w):
    leaves = [x.clone().requires_grad_(True) if k in _floats(inputs) else x
              for k, x in enumerate(inputs)]
    (f(*leaves) * w).sum().backward()
    return [leaves[k].grad for k in _floats(inputs)]


def _weights(f, inputs):
    out = f(*inputs)
    return torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape) * 0.25 - 1.0


@pytest.mark.parametrize("what, f, inputs", CASES, ids=IDS)
def test_grad_vjp_and_jacrev_equal_eager_autograd(what, f, inputs):
    floats = _floats(inputs)
    w = _weights(f, inputs)
    want = _eager_grads(f, inputs, w)

    def loss(*xs):
        return (f(*xs) * w).sum()
    got = func.grad(loss, argnums=tuple(floats))(*inputs)
    for g, e in zip(got, want):
        assert torch.equal(g, e), what
    out, vjp = func.vjp(lambda *xs: f(*(xs + tuple(inputs[len(floats):]))),
                        *[inputs[k] for k in floats])
    assert torch.equal(out, f(*inputs))
    for g, e in zip(vjp(w), want):
        assert torch.equal(g, e), what
    # The Jacobian of the first float input, against PyTorch's eager one (one backward per
    # output element).
    first = floats[0]

    def of_first(x):
        return f(*(x if k == first else v for k, v in enumerate(inputs)))
    jac = func.jacrev(of_first)(inputs[first])
    assert torch.equal(jac, torch.autograd.functional.jacobian(of_first, inputs[first])), what


@pytest.mark.parametrize("what, f, inputs", CASES, ids=IDS)
def test_per_sample_gradients_equal_a_loop(what, f, inputs):
    """``vmap(grad(loss))`` over a batch of every input: the gradient op under vmap."""
    floats = _floats(inputs)
    w = _weights(f, inputs)

    def loss(*xs):
        return (f(*xs) * w).sum()
    batched = [_batch(x) for x in inputs]
    got = func.vmap(func.grad(loss, argnums=tuple(floats)))(*batched)
    for b in range(3):
        want = _eager_grads(f, [x[b] for x in batched], w)
        for g, e in zip(got, want):
            assert torch.equal(g[b], e), what


def test_a_table_shared_by_the_batch_gets_each_samples_gradient():
    """The common case: one embedding table, a batch of id lists; each sample's gradient of
    the table, as PyTorch's own ``embedding`` gives it."""
    ids = torch.tensor([[5, 0, 5], [1, 1, 2], [0, 3, 4]])

    def loss(table, ids):
        return ng.embedding_lookup(table, ids).pow(2).sum()

    def theirs(table, ids):
        return torch.nn.functional.embedding(ids, table).pow(2).sum()
    got = func.vmap(func.grad(loss), in_dims=(None, 0))(TABLE, ids)
    want = func.vmap(func.grad(theirs), in_dims=(None, 0))(TABLE, ids)
    assert got.shape == (3, *TABLE.shape) and torch.equal(got, want)
    # A gather's (its own batching rule), against index_select's.
    got = func.vmap(func.grad(lambda t, i: ng.gather(t, i).pow(2).sum()),
                    in_dims=(None, 0))(TABLE, ids)
    want = func.vmap(func.grad(lambda t, i: t.index_select(0, i).pow(2).sum()),
                     in_dims=(None, 0))(TABLE, ids)
    assert torch.equal(got, want)


def test_grad_of_vmap():
    """The other order: one gradient of a loss over a batch that ``vmap`` maps."""
    ids = torch.tensor([[5, 0, 5], [1, 1, 2], [0, 3, 4]])
    w = torch.arange(3 * 3 * 4.0).reshape(3, 3, 4)
    for ours, theirs in [
            (lambda t, i: ng.gather(t, i), lambda t, i: t.index_select(0, i)),
            (lambda t, i: ng.gather_nd(t, i[:, None]), lambda t, i: t.index_select(0, i)),
            (lambda t, i: ng.embedding_lookup(t, i), lambda t, i: t.index_select(0, i))]:
        got = func.grad(lambda t: (func.vmap(ours, in_dims=(None, 0))(t, ids) * w).sum())(
            TABLE)
        want = func.grad(lambda t: (func.vmap(theirs, in_dims=(None, 0))(t, ids) * w)
                         .sum())(TABLE)
        assert torch.equal(got, want)


def test_results_whose_shape_the_values_give_are_refused_under_vmap():
    ids = torch.tensor([[0, 0, 1, 1, 2, 2], [0, 0, 0, 0, 0, 1]])
    with pytest.raises(RuntimeError, match="results of different shapes"):
        func.vmap(lambda i: ng.segment_sum(TABLE, i), in_dims=0)(ids)
    # Where every element gives one shape, the batch stacks.
    same = torch.tensor([[0, 0, 1, 1, 2, 2], [0, 1, 1, 1, 2, 2]])
    got = func.vmap(lambda i: ng.segment_sum(TABLE, i))(same)
    assert torch.equal(got, torch.stack([ng.segment_sum(TABLE, i) for i in same]))


def test_errors_under_the_transforms():
    """The C++ kernel's errors are the built-in classes of ndgather's (a ``ValueError`` for
    an ``InvalidArgumentError``), as under ``torch.compile``, in the eager call's words."""
    bad = torch.tensor([[0, 9], [1, 2]])
    with pytest.raises(ng.InvalidArgumentError) as eager:
        ng.gather(TABLE, bad[0])
    with pytest.raises(ValueError, match="9 is not in") as transformed:
        func.vmap(lambda i: ng.gather(TABLE, i))(bad)
    with pytest.raises(ValueError) as under_grad:
        func.grad(lambda t: ng.gather(t, bad[0]).sum())(TABLE)
    assert str(under_grad.value) == str(eager.value)
    assert "9 is not in [0, 6)" in str(transformed.value)
    with pytest.raises(NotImplementedError, match="sparse=True"):
        func.grad(lambda t: ng.embedding_bag(t, torch.tensor([1, 2]), torch.tensor([0]),
                                             sparse=True).sum())(TABLE)


#: The cases whose op is not linear in its float inputs: second derivatives are refused
#: there. Each has forward mode: routed (``_core.op_routed``: a max, a min, a product),
#: or, ``embedding_bag`` with ``per_sample_weights``, linear in its table and its weights
#: apart (``_core.op_multilinear``).
NOT_LINEAR = {"unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
              "segment_max", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
              "scatter_reduce amax", "embedding_bag"}


def _of(f, inputs, k):
    """``f`` as a function of its input ``k`` alone."""
    return lambda x: f(*(x if j == k else v for j, v in enumerate(inputs)))


@pytest.mark.parametrize("what, f, inputs", CASES, ids=IDS)
def test_forward_mode_where_the_op_is_linear_or_routed(what, f, inputs):
    """``jvp`` and ``jacfwd`` of each float input, where the op is linear, routed or
    linear in groups apart, give ``jacrev``'s Jacobian (which the test above checks against
    eager autograd); so does ``jvp`` in all float inputs at once (the product rule, where a
    bag's table and weights both have tangents)."""
    floats = _floats(inputs)
    tangents = [torch.linspace(-1.0, 2.0, inputs[k].numel()).reshape(inputs[k].shape)
                for k in floats]
    def joint(*xs):
        return f(*[xs[floats.index(j)] if j in floats else v for j, v in enumerate(inputs)])
    out, t = func.jvp(joint, tuple(inputs[k] for k in floats), tuple(tangents))
    jacs = func.jacrev(joint, argnums=tuple(range(len(floats))))(*[inputs[k] for k in floats])
    want = sum((j.reshape(out.numel(), -1) @ d.reshape(-1)).reshape(out.shape)
               for j, d in zip(jacs, tangents))
    assert torch.allclose(t, want, atol=1e-5), what
    for k in floats:
        g = _of(f, inputs, k)
        tangent = torch.linspace(-1.0, 2.0, inputs[k].numel()).reshape(inputs[k].shape)
        jac = func.jacrev(g)(inputs[k])
        assert torch.allclose(func.jacfwd(g)(inputs[k]), jac), (what, k)
        out, t = func.jvp(g, (inputs[k],), (tangent,))
        want = (jac.reshape(out.numel(), -1) @ tangent.reshape(-1)).reshape(out.shape)
        assert torch.equal(out, f(*inputs)) and torch.allclose(t, want, atol=1e-5), (what, k)


def test_forward_mode_with_dual_tensors_and_a_fill():
    """Forward AD's dual tensors, outside ``torch.func``: the tangent is the op on the
    tangents; a value the fill policy writes is constant, its tangent zero."""
    import torch.autograd.forward_ad as fwAD
    ids = torch.tensor([5, 9, 0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(TABLE.clone(), torch.full_like(TABLE, 3.0))
        out = ng.gather(dual, ids, bad_indices="fill", fill_value=7.5)
        primal, tangent = fwAD.unpack_dual(out)
        assert primal[1].eq(7.5).all() and tangent[1].eq(0).all()
        assert torch.equal(tangent[[0, 2]], torch.full((2, 4), 3.0))
        updates = fwAD.make_dual(torch.ones(1, 4), torch.full((1, 4), 2.0))
        scattered = ng.tensor_scatter_nd_add(TABLE, torch.tensor([[1]]), updates)
        assert torch.equal(fwAD.unpack_dual(scattered).tangent,
                           torch.zeros(6, 4).index_fill(0, torch.tensor([1]), 2.0))


def _second(loss, x):
    return {"hessian": func.hessian(loss)(x),
            "jacfwd(jacrev)": func.jacfwd(func.jacrev(loss))(x),
            "jacrev(jacrev)": func.jacrev(func.jacrev(loss))(x)}


@pytest.mark.parametrize("what, f, inputs", CASES, ids=IDS)
def test_second_derivatives_where_the_op_is_linear(what, f, inputs):
    """The Hessian of ``sum(f(x)**2)``, ``2 JᵀJ`` for an op linear in x (``J`` from
    ``jacrev``), by forward over reverse and reverse over reverse; ``grad`` of ``grad`` too.
    Where the op is not linear, each is refused, not given zeros."""
    k = _floats(inputs)[0]
    g = _of(f, inputs, k)

    def loss(x):
        return g(x).pow(2).sum()
    if what in NOT_LINEAR or what == "tensor_scatter_nd_update":
        # (PyTorch's words where the gradient has no derivative: embedding_bag's, which
        # reads per_sample_weights, and an update's, which is not its tangent's transpose.)
        with pytest.raises(RuntimeError, match="not linear there|does not support it"):
            func.hessian(loss)(inputs[k])
        with pytest.raises(RuntimeError, match="derivative for ndgather::.* is not impl"):
            func.grad(lambda x: func.grad(loss)(x).sum())(inputs[k])
        return
    jac = func.jacrev(g)(inputs[k]).reshape(g(inputs[k]).numel(), -1)
    want = (2 * jac.T @ jac).reshape(*inputs[k].shape, *inputs[k].shape)
    for how, got in _second(loss, inputs[k]).items():
        assert torch.allclose(got, want, atol=1e-4), (what, how)
    rows = want.reshape(inputs[k].numel(), -1).sum(0).reshape(inputs[k].shape)
    grad_of_grad = func.grad(lambda x: func.grad(loss)(x).sum())(inputs[k])
    assert torch.allclose(grad_of_grad, rows, atol=1e-4), what


def test_the_typed_ops_batch_when_called_directly():
    """``torch.vmap`` of the typed ops themselves, each overload (``with_grad`` outside
    autograd, ``grad`` once per element)."""
    ng._torch.native()
    op = torch.ops.ndgather.gather
    ids = torch.tensor([5, 1, 1, 0])
    batch = torch.stack([TABLE, TABLE * 2])
    for role in (op.native, op.with_grad):
        assert torch.equal(func.vmap(lambda t: role(t, ids, ""))(batch), batch[:, ids])
    out, up = TABLE[ids], torch.stack([torch.ones(4, 4), torch.full((4, 4), 2.0)])
    (grads,) = func.vmap(lambda u: op.grad(TABLE, ids, out, u, ""))(up)
    want = torch.zeros(6, 4).index_add_(0, ids, torch.ones(4, 4))
    assert torch.equal(grads[0], want) and torch.equal(grads[1], 2 * want)


def test_the_transforms_under_torch_compile():
    """``torch.compile`` of ``vmap`` and of ``grad`` in one graph, and ``vmap`` of a compiled
    function; ``vmap`` of ``grad`` inside ``torch.compile`` is PyTorch's limit: its traced
    ``autograd.Function`` (``ApplyTemplate``) has no batching rule."""
    ids = torch.tensor([[2, 0, 2], [1, 1, 3]])

    def f(t, i):
        return ng.gather(t, i)

    def loss(t, i):
        return ng.gather(t, i).pow(2).sum()
    eager_vmap = func.vmap(f, in_dims=(None, 0))(TABLE, ids)
    torch._dynamo.reset()
    assert torch.equal(torch.compile(func.vmap(f, in_dims=(None, 0)), fullgraph=True)(
        TABLE, ids), eager_vmap)
    assert torch.equal(func.vmap(torch.compile(f), in_dims=(None, 0))(TABLE, ids),
                       eager_vmap)
    torch._dynamo.reset()
    assert torch.equal(torch.compile(func.grad(loss), fullgraph=True)(TABLE, ids[0]),
                       func.grad(loss)(TABLE, ids[0]))
    torch._dynamo.reset()
    with pytest.raises(Exception, match="ApplyTemplate"):
        torch.compile(func.vmap(func.grad(loss), in_dims=(None, 0)))(TABLE, ids)


def test_torch_compile_of_vmap_over_a_parameter():
    """Plain autograd inside ``vmap`` under ``torch.compile`` (no gradient transform): the
    typed ops with their C++ gradient, as before ``torch.func`` had its own path."""
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.nn.Parameter(TABLE.clone())

        def forward(self, ids):
            return func.vmap(lambda i: ng.gather(self.table, i))(ids).pow(2).sum()
    ids = torch.tensor([[5, 0, 5], [1, 1, 2]])
    for fullgraph in (False, True):
        torch._dynamo.reset()
        model = Model()
        torch.compile(model, fullgraph=fullgraph)(ids).backward()
        want = leaf = TABLE.clone().requires_grad_(True)
        leaf[ids].pow(2).sum().backward()
        assert torch.equal(model.table.grad, want.grad)


def test_an_empty_batch_has_the_shape_of_its_elements():
    ids = torch.tensor([[5, 0, 5], [1, 1, 2]])[:0]
    got = func.vmap(func.grad(lambda t, i: ng.gather(t, i).pow(2).sum()),
                    in_dims=(None, 0))(TABLE, ids)
    assert got.shape == (0, *TABLE.shape)
    got = func.vmap(lambda x: ng.unsorted_segment_sum(x, torch.tensor([0, 1, 0, 1, 0, 1]), 2))(
        torch.zeros(0, 6, 4))
    assert got.shape == (0, 2, 4)
    with pytest.raises(RuntimeError, match="empty batch"):
        func.vmap(lambda x: ng.segment_sum(x, torch.tensor([0, 0, 1, 1, 2, 2])))(
            torch.zeros(0, 6, 4))


def test_forward_mode_levels_and_vmap():
    """A ``dual_level`` with no tangent does not stop ``vmap``; ``jvp`` around ``vmap``
    batches the tangent's op, and a max's (routed) too, against PyTorch's own."""
    import torch.autograd.forward_ad as fwAD
    ids = torch.tensor([5, 0])
    batch = torch.stack([TABLE, TABLE * 2])
    with fwAD.dual_level():
        assert torch.equal(func.vmap(lambda t: ng.gather(t, ids))(batch), batch[:, ids])
    tangent = torch.arange(48.0).reshape(batch.shape)
    out, t = func.jvp(lambda b: func.vmap(lambda x: ng.gather(x, ids))(b), (batch,),
                      (tangent,))
    assert torch.equal(out, batch[:, ids]) and torch.equal(t, tangent[:, ids])
    segments = torch.tensor([0, 1, 0, 1, 0, 1])
    out, t = func.jvp(lambda b: func.vmap(
        lambda x: ng.unsorted_segment_max(x, segments, 2))(b), (batch,), (tangent,))
    want, want_t = func.jvp(lambda b: torch.zeros(2, 2, 4).scatter_reduce(
        1, segments[None, :, None].expand(2, 6, 4), b, "amax", include_self=False),
        (batch,), (tangent,))
    assert torch.equal(out, want) and torch.equal(t, want_t)


def test_forward_mode_of_a_max_min_or_product_against_pytorchs_own():
    """A routed op's tangent (``_core.op_routed``), through ``jvp`` and dual tensors:
    ``scatter_reduce``'s ``amax`` and ``amin`` equal PyTorch's own bit for bit, ties of
    three averaged and a loser's NaN tangent ignored; ``prod``, whose forward mode in
    PyTorch 2.15 gives a zero tangent for ``src``, equals ``jacrev``'s Jacobian times the
    tangent, with and without the input. Refused: a max without the input (PyTorch's
    gradient, the core's, counts the input among the ties there, which its forward mode
    does not), and a complex product."""
    import torch.autograd.forward_ad as fwAD

    def exact(a, b):  # (a winner's NaN tangent is the tangent's)
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)
    index = torch.tensor([0, 1, 1, 0, 1])
    src = torch.tensor([1.0, 5.0, 5.0, 2.0, 5.0], dtype=torch.float64)
    src_t = torch.tensor([float("nan"), 1.0, 2.0, 8.0, 4.0], dtype=torch.float64)
    base = torch.tensor([2.0, 5.0], dtype=torch.float64)
    base_t = torch.tensor([16.0, 32.0], dtype=torch.float64)
    for reduce, include_self in [("amax", True), ("amin", True), ("prod", True),
                                 ("prod", False)]:
        def ours(b, x):
            return ng.scatter_reduce(b, 0, index, x, reduce, include_self=include_self)

        def theirs(b, x):
            return b.scatter_reduce(0, index, x, reduce, include_self=include_self)
        t = src_t.nan_to_num(3.0) if reduce == "prod" else src_t
        out, got = func.jvp(ours, (base, src), (base_t, t))
        with fwAD.dual_level():
            dual = ours(fwAD.make_dual(base, base_t), fwAD.make_dual(src, t))
            exact(fwAD.unpack_dual(dual).tangent, got)
        assert torch.equal(out, theirs(base, src))
        if reduce == "prod":
            jb, jx = func.jacrev(theirs, argnums=(0, 1))(base, src)
            assert torch.allclose(got, jb @ base_t + jx @ t), include_self
        else:
            exact(got, func.jvp(theirs, (base, src), (base_t, t))[1])
    with pytest.raises(RuntimeError, match="reaches input: .*amax or amin without its in"):
        func.jvp(lambda b: ng.scatter_reduce(b, 0, index, src, "amax", include_self=False),
                 (base,), (base_t,))
    with pytest.raises(RuntimeError, match="not implemented for complex data"):
        func.jvp(lambda x: ng.unsorted_segment_prod(x, index, 2),
                 (src.to(torch.complex128),), (src.to(torch.complex128),))


def test_forward_mode_of_a_weighted_bag_and_forward_over_forward():
    """A bag with ``per_sample_weights`` (``_core.op_multilinear``: linear in its table and,
    apart, in its weights), which PyTorch's own ``embedding_bag`` has no forward mode for:
    ``jvp`` in both equals the same sum written with ``index_select``, and dual tensors the
    same, a table that requires grad getting its gradient through the tangent. Forward over
    forward of a max (constant factors): its tangent's tangent; of a product, refused."""
    import torch.autograd.forward_ad as fwAD
    table = torch.arange(12.0).reshape(4, 3)
    ids, offsets = torch.tensor([0, 2, 3, 1]), torch.tensor([0, 2])
    weights = torch.tensor([1.0, 2.0, 0.5, 3.0])
    tangents = (torch.full((4, 3), 0.5), torch.tensor([1.0, -1.0, 2.0, 0.25]))

    def ours(w, p):
        return ng.embedding_bag(w, ids, offsets, mode="sum", per_sample_weights=p)

    def theirs(w, p):
        rows = w.index_select(0, ids) * p[:, None]
        return torch.stack([rows[:2].sum(0), rows[2:].sum(0)])
    got = func.jvp(ours, (table, weights), tangents)[1]
    assert torch.equal(got, func.jvp(theirs, (table, weights), tangents)[1])
    w = table.clone().requires_grad_()
    with fwAD.dual_level():
        dual = ours(fwAD.make_dual(w, tangents[0]), fwAD.make_dual(weights, tangents[1]))
        tangent = fwAD.unpack_dual(dual).tangent
    assert torch.equal(tangent, got)
    tangent.sum().backward()
    assert torch.equal(w.grad, torch.tensor([1.0, 0.25, -1.0, 2.0])[:, None].expand(4, 3))
    with pytest.raises(RuntimeError, match="inside another level of forward mode"):
        func.jvp(lambda s: func.jvp(ours, (table, weights), tangents)[1] * s,
                 (torch.ones(()),), (torch.ones(()),))
    x, segments, ones = torch.tensor([1.0, 3.0, 2.0]), torch.tensor([0, 0, 1]), torch.ones(3)

    def twice(f):
        return func.jvp(lambda t: func.jvp(f, (x,), (t,))[1], (ones,), (ones,))[1]
    assert torch.equal(twice(lambda y: ng.unsorted_segment_max(y, segments, 2)),
                       torch.ones(2))
    with pytest.raises(RuntimeError, match="derivative for ndgather::unsorted_segment_prod"):
        twice(lambda y: ng.unsorted_segment_prod(y, segments, 2))


def test_what_the_transforms_refuse_says_why():
    ids = torch.tensor([[0, 9], [1, 2]])
    fills = torch.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="fill_value is one value"):
        func.vmap(lambda i, f: ng.gather(TABLE, i, bad_indices="fill", fill_value=f))(
            ids, fills)
    with pytest.raises(TypeError, match="torch.func"):
        func.vmap(lambda i: ng.gather(TABLE, i, out=torch.empty(2, 4)))(ids % 6)
    # sparse=True is about gradients: under vmap alone it is taken.
    bags = func.vmap(lambda i: ng.embedding_bag(TABLE, i, torch.tensor([0]), mode="sum",
                                                sparse=True))(
        ids % 6)
    assert torch.equal(bags, torch.stack([TABLE[i % 6].sum(0, keepdim=True) for i in ids]))


def test_vmap_where_compiled_code_calls_the_generic_op():
    """A strided table under ``torch.compile`` and a program ``torch.export`` saves call
    ``ndgather::op``, which batches once per element."""
    ids = torch.tensor([[5, 0, 5], [1, 1, 2]])

    def strided(i):
        return ng.gather(TABLE.t(), i % 4)
    want = torch.stack([strided(i) for i in ids])
    torch._dynamo.reset()
    assert torch.equal(torch.compile(func.vmap(strided), fullgraph=True)(ids), want)

    class Model(torch.nn.Module):
        def forward(self, ids):
            return func.vmap(lambda i: ng.gather(TABLE, i))(ids)
    program = torch.export.export(Model(), (ids,))
    assert torch.equal(program.module()(ids), TABLE[ids])
    assert torch.equal(func.vmap(lambda i: torch.ops.ndgather.op(
        [TABLE, i], [1, 1], "gather", ""))(ids), TABLE[ids])


def test_a_batch_that_requires_grad_gets_its_gradient():
    """Inside ``vmap`` a batched tensor answers False for ``requires_grad`` whatever it
    wraps: the op still records its gradient (eagerly, under ``grad``, and compiled)."""
    ids = torch.tensor([5, 0, 5])

    def batch():
        return torch.stack([TABLE, TABLE * 2]).requires_grad_(True)
    theirs = batch()
    func.vmap(lambda t: t[ids])(theirs).pow(2).sum().backward()
    ours = batch()
    func.vmap(lambda t: ng.gather(t, ids))(ours).pow(2).sum().backward()
    assert torch.equal(ours.grad, theirs.grad)
    torch._dynamo.reset()
    compiled = batch()
    torch.compile(func.vmap(lambda t: ng.gather(t, ids)))(compiled).pow(2).sum().backward()
    assert torch.equal(compiled.grad, theirs.grad)

    def loss(gather):
        return lambda t: func.vmap(lambda x: gather(x).pow(2).sum())(
            torch.stack([t, 2 * t, t + 1])).sum()
    assert torch.equal(func.grad(loss(lambda x: ng.gather(x, ids)))(TABLE),
                       func.grad(loss(lambda x: x[ids]))(TABLE))


def test_an_errors_class_under_jvp_is_the_ops():
    """Under ``jvp`` a bad index is the op's error (the kernel's built-in class, as under
    every transform), not forward mode's refusal."""
    x = torch.ones(2, 4)
    with pytest.raises(ValueError, match="9 is not in"):
        func.jvp(lambda x: x * ng.gather(TABLE, torch.tensor([9, 1])), (x,), (x,))


def test_forward_mode_elsewhere_in_the_function_is_not_refused():
    """Forward mode is refused only where a tangent reaches the op."""
    ids, x = torch.tensor([5, 0, 5]), torch.tensor(0.3)
    batch = torch.stack([TABLE, TABLE * 2])

    def tangent(gather):
        return func.vmap(lambda t: func.jvp(lambda y: y.sin() * gather(t).sum(), (x,),
                                            (torch.tensor(1.0),))[1])(batch)
    assert torch.equal(tangent(lambda t: ng.gather(t, ids)), tangent(lambda t: t[ids]))


class _Calls:
    """Counts the typed ops that ``_torch_func`` calls, and its function's applications."""

    def __init__(self, monkeypatch):
        from ndgather import _torch_func
        self.ops, self.functions = [], 0
        typed, function = _torch_func._typed, _torch_func._FUNCTION[0]

        def counted(name, role):
            op = typed(name, role)

            def call(*args):
                self.ops.append((name, role))
                return op(*args)
            return call

        calls = self

        class Counted:
            @staticmethod
            def apply(*args):
                calls.functions += 1
                return function.apply(*args)
        monkeypatch.setattr(_torch_func, "_typed", counted)
        monkeypatch.setattr(_torch_func, "_FUNCTION", [Counted, Counted])


def test_vmap_takes_one_call_where_it_can(monkeypatch):
    """A batched table: one call with one more batch dimension (plus the call that vmap
    batches); a table shared by the batch that a call would need broadcast: one call per
    element, each reading it in place; ``vmap`` alone no function."""
    calls = _Calls(monkeypatch)
    batch, ids = torch.stack([TABLE] * 5), torch.tensor([[2, 0]] * 6)
    func.vmap(lambda t: ng.take_along_axis(t, ids, axis=1))(batch)
    assert calls.ops == [("take_along_axis", "native")] * 2 and calls.functions == 0
    calls.ops.clear()
    # take_along_axis broadcasts the shared table (one more dimension of size 1).
    got = func.vmap(lambda i: ng.take_along_axis(TABLE, i, axis=-1))(torch.stack([ids] * 5))
    assert calls.ops == [("take_along_axis", "native")] * 2
    assert torch.equal(got, torch.stack([torch.take_along_dim(TABLE, ids, 1)] * 5))
    calls.ops.clear()
    func.vmap(lambda i: ng.gather(TABLE, i, axis=1, batch_dims=1))(torch.stack([ids] * 5))
    assert calls.ops == [("gather", "native")] * 6
    calls.ops.clear()
    func.vmap(lambda i: ng.gather(TABLE, i))(torch.tensor([[5, 0], [1, 1], [2, 3]]))
    assert calls.ops == [("gather", "native")] * 2 and calls.functions == 0
    func.grad(lambda t: ng.gather(t, torch.tensor([5, 0])).sum())(TABLE)
    assert calls.functions == 1


def test_nested_and_higher_derivatives_equal_pytorchs_own():
    """A tangent that has a tangent of its own (``jvp`` of ``jvp`` with a tangent that
    depends on the point), third derivatives forward and reverse, and the gradient penalty
    (``grad`` of a gradient's norm, where the outer variable reaches the op through the
    upstream gradient alone)."""
    x = torch.linspace(-2.0, 3.0, 15, dtype=torch.float64).reshape(5, 3)
    ids = torch.tensor([4, 0, 2, 2])

    def nested(op):
        return func.jvp(lambda y: func.jvp(op, (y,), (y ** 2,))[1], (x,),
                        (torch.ones_like(x),))[1]

    def third(op, outer):
        return outer(func.hessian(lambda y: (op(y) ** 3).sum()))(x)

    def penalty(op):
        return func.grad(lambda w: func.grad(lambda y: (w * op(y)).sum())(x).pow(2).sum())(
            torch.tensor(1.5, dtype=torch.float64))
    ours, theirs = (lambda y: ng.gather(y, ids)), (lambda y: y[ids])
    assert torch.allclose(nested(ours), nested(theirs))
    for outer in (func.jacfwd, func.jacrev):
        assert torch.allclose(third(ours, outer), third(theirs, outer))
    assert torch.allclose(penalty(ours), penalty(theirs))


def test_a_backward_that_no_gradient_reaches():
    """An output whose gradient a later function drops: the inputs get none from the op."""
    class Drop(torch.autograd.Function):
        @staticmethod
        def forward(y):
            return y.clone()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return None
    got = func.grad(lambda t: Drop.apply(ng.gather(t, torch.tensor([1, 0]))).sum() + t.sum())(
        TABLE)
    assert torch.equal(got, torch.ones_like(TABLE))


def test_dual_tensors_that_require_grad_and_a_dual_fill():
    """A dual tensor that also requires grad: the tangent, and then the gradient (the
    gradient op reads the primals); a dual fill value is refused (it is read as a
    number)."""
    import torch.autograd.forward_ad as fwAD
    ids = torch.tensor([5, 1, 1])
    table = TABLE.clone().requires_grad_(True)
    with fwAD.dual_level():
        out = ng.gather(fwAD.make_dual(table, torch.ones_like(table)), ids)
        assert torch.equal(fwAD.unpack_dual(out).tangent, torch.ones(3, 4))
        out.sum().backward()
        with pytest.raises(TypeError, match="dual tensor of forward AD"):
            ng.gather(TABLE, torch.tensor([9]), bad_indices="fill",
                      fill_value=fwAD.make_dual(torch.tensor(2.0), torch.tensor(1.0)))
    assert torch.equal(table.grad, torch.zeros(6, 4).index_add(0, ids, torch.ones(3, 4)))


def test_an_updates_second_derivative_is_refused():
    """TensorFlow's gradient of a scatter update gives each repeated index the slice's
    gradient where the result keeps one write: not the tangent's transpose, so no second
    derivative is built from it; forward mode, the derivative of the result, is there."""
    idx = torch.tensor([[1], [3], [1]])
    updates = torch.tensor([10.0, 20.0, 30.0])
    base = torch.arange(5.0)

    def f(u):
        return ng.tensor_scatter_nd_update(base, idx, u)
    assert torch.equal(func.jacfwd(f)(updates)[1], torch.tensor([0.0, 0.0, 1.0]))
    with pytest.raises(RuntimeError, match="does not support it|is not implemented"):
        func.hessian(lambda u: (f(u) ** 3).sum())(updates)
