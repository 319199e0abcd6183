"""The table of what passes under PyTorch (issue 55): each op of the PyTorch front end under
each of PyTorch's transformations, run and checked here, and the table in
``docs/concepts/pytorch.md`` that must equal the run's (``NDGATHER_BLESS=1`` rewrites it).

A cell is "yes" where the op runs and equals its reference: a gradient PyTorch's numerical
one (``gradcheck``, in float64), a compiled or exported result the eager one, a ``vmap``
the op once per element, a ``torch.func`` gradient eager autograd's. Elsewhere it names the
exception raised, and a wrong result fails the test.

PyTorch runs with ``scripts/test.sh --frameworks``; elsewhere this file is skipped.
"""

import os
import pathlib

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed: run "
                            "scripts/test.sh --frameworks")
import ndgather as ng  # noqa: E402

func = torch.func

#: Float64, distinct and positive: a max has no ties, a product no zeros.
DATA = torch.arange(24, dtype=torch.float64).reshape(6, 4) * 0.37 + 0.5
SORTED_IDS = torch.tensor([0, 0, 1, 3, 3, 3])
UNSORTED_IDS = torch.tensor([2, 0, 2, 1, 3, 0])
SCATTER_AT = torch.tensor([[5], [0]])
UPDATES = torch.arange(8, dtype=torch.float64).reshape(2, 4) * 0.5 - 1.0


def _variants(prefix, names, make):
    return [(f"{prefix}{n}", make(f"{prefix}{n}")) for n in names]


def _segment(name):
    return lambda d: getattr(ng, name)(d, SORTED_IDS)


def _unsorted(name):
    return lambda d: getattr(ng, name)(d, UNSORTED_IDS, 4)


def _scatter(name):
    return lambda t, u: getattr(ng, name)(t, SCATTER_AT, u)


#: Each row: its label, and the calls it covers, each on float tensors only (indices are
#: constants), with its float inputs.
ROWS = [
    ("`gather`", [("gather", (lambda t: ng.gather(t, torch.tensor([5, 1, 1, 0])), (DATA,))),
                  ("gather batch_dims", (lambda t: ng.gather(
                      t, torch.tensor([[3, 0]] * 6), axis=1, batch_dims=1), (DATA,)))]),
    ("`gather_nd`", [("gather_nd", (lambda t: ng.gather_nd(
        t, torch.tensor([[5, 3], [0, 1]])), (DATA,)))]),
    ("`take_along_axis`", [("take_along_axis", (lambda t: ng.take_along_axis(
        t, torch.tensor([[2, 0]] * 6), axis=1), (DATA,)))]),
    ("`embedding_lookup` (one table, or shards)", [
        ("embedding_lookup", (lambda t: ng.embedding_lookup(t, torch.tensor([[5, 0], [5, 3]])),
                              (DATA,))),
        ("embedding_lookup shards", (lambda a, b: ng.embedding_lookup(
            [a, b], torch.tensor([[5, 0], [5, 3]])), (DATA[0::2].clone(), DATA[1::2].clone())))]),
    ("`embedding_bag` (with `per_sample_weights`)", [
        ("embedding_bag", (lambda t, w: ng.embedding_bag(
            t, torch.tensor([1, 5, 5, 2, 0]), torch.tensor([0, 2, 2]), mode="sum",
            per_sample_weights=w), (DATA, torch.tensor([1.0, 2.0, 0.5, -1.0, 3.0],
                                                       dtype=torch.float64))))]),
    ("`segment_*` (sum, mean, max, min, prod)",
     [(n, (_segment(n), (DATA,))) for n in
      ("segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod")]),
    ("`unsorted_segment_*` (sum, mean, max, min, prod, sqrt_n)",
     [(n, (_unsorted(n), (DATA,))) for n in
      ("unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_max",
       "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sqrt_n")]),
    ("`gather_segment`", [("gather_segment", (lambda t: ng.gather_segment(
        t, torch.tensor([0, 5, 5, 2, 1]), torch.tensor([2, 0, 2, 2, 1]), 3), (DATA,)))]),
    ("`tensor_scatter_nd_*` (update, add, sub, min, max)",
     [(n, (_scatter(n), (DATA, UPDATES))) for n in
      ("tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
       "tensor_scatter_nd_min", "tensor_scatter_nd_max")]),
    ("`scatter_nd`", [("scatter_nd", (lambda u: ng.scatter_nd(
        torch.tensor([[7], [0], [2]]), u, [8, 4]), (DATA[:3].clone(),)))]),
    ("`scatter_reduce` (amax)", [("scatter_reduce", (lambda t, s: ng.scatter_reduce(
        t, 0, torch.tensor([[1, 0, 5, 1], [2, 1, 0, 2]]), s, "amax"),
        (DATA, DATA[:2] * 1.5 - 4.0)))]),
]


class Wrong(AssertionError):
    """A result that differs from its reference: a bug, never a cell of the table."""


def _same(got, want, what):
    if isinstance(got, (list, tuple)):
        for g, w in zip(got, want, strict=True):
            _same(g, w, what)
        return
    if got.shape != want.shape or not torch.allclose(got, want, rtol=1e-12, atol=1e-12):
        raise Wrong(f"{what}: {got} != {want}")


def _weights(out):
    return torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape) * 0.25 - 1.0


def _eager_grads(f, inputs):
    leaves = [x.clone().requires_grad_(True) for x in inputs]
    out = f(*leaves)
    (out * _weights(out)).sum().backward()
    return out.detach(), [x.grad for x in leaves]


def autograd(f, inputs):
    leaves = [x.clone().requires_grad_(True) for x in inputs]
    if not torch.autograd.gradcheck(f, leaves, raise_exception=False):
        raise Wrong("gradcheck")


def compiled(f, inputs):
    want_out, want = _eager_grads(f, inputs)
    torch._dynamo.reset()
    g = torch.compile(f, fullgraph=True)
    got_out, got = _eager_grads(g, inputs)
    _same(got_out, want_out, "forward")
    _same(got, want, "gradients")


def exported(f, inputs):
    class Module(torch.nn.Module):
        def forward(self, *xs):
            return f(*xs)
    program = torch.export.export(Module(), tuple(inputs))
    _same(program.module()(*inputs), f(*inputs), "exported")


def vmapped(f, inputs):
    """Every float input batched (``test_torch_func.py`` batches the indices too)."""
    batch = [torch.stack([x, x * 2.0 - 1.0, x + 0.5]) for x in inputs]
    _same(func.vmap(f)(*batch), torch.stack([f(*(x[b] for x in batch)) for b in range(3)]),
          "vmap")


def reverse(f, inputs):
    out, want = _eager_grads(f, inputs)
    w = _weights(out)
    n = len(inputs)
    _same(func.grad(lambda *xs: (f(*xs) * w).sum(), argnums=tuple(range(n)))(*inputs), want,
          "grad")
    _, vjp = func.vjp(f, *inputs)
    _same(vjp(w), want, "vjp")
    _same(func.jacrev(f)(*inputs), torch.autograd.functional.jacobian(f, tuple(inputs))[0],
          "jacrev")


def per_sample(f, inputs):
    batch = [torch.stack([x, x * 2.0 - 1.0, x + 0.5]) for x in inputs]
    w = _weights(f(*inputs))
    got = func.vmap(func.grad(lambda *xs: (f(*xs) * w).sum(),
                              argnums=tuple(range(len(inputs)))))(*batch)
    for b in range(3):
        leaves = [x[b].clone().requires_grad_(True) for x in batch]
        (f(*leaves) * w).sum().backward()
        _same([g[b] for g in got], [x.grad for x in leaves], "per-sample")


def forward_mode(f, inputs):
    func.jvp(f, tuple(inputs), tuple(torch.ones_like(x) for x in inputs))


COLUMNS = [("autograd", autograd), ("`torch.compile`, forward and backward", compiled),
           ("`torch.export`", exported), ("`vmap`", vmapped),
           ("`grad`, `vjp`, `jacrev`", reverse), ("`vmap` of `grad`", per_sample),
           ("`jvp` (forward mode)", forward_mode)]


def _cell(check, calls):
    """``yes`` where every call passes; else the class of the first exception."""
    for what, (f, inputs) in calls:
        try:
            check(f, inputs)
        except Wrong:
            raise
        except Exception as e:  # the cell names what PyTorch or ndgather raised
            return f"no: `{type(e).__name__}`"
    return "yes"


def table():
    head = "| op | " + " | ".join(c for c, _ in COLUMNS) + " |"
    rule = "|---" * (len(COLUMNS) + 1) + "|"
    lines = [head, rule]
    for label, calls in ROWS:
        lines.append(f"| {label} | " + " | ".join(_cell(check, calls)
                                                  for _, check in COLUMNS) + " |")
    return "\n".join(lines)


PAGE = pathlib.Path(__file__).parents[3] / "docs" / "concepts" / "pytorch.md"
BEGIN, END = "<!-- torch-table: tests/test_torch_table.py -->", "<!-- end torch-table -->"


def test_the_pages_table_is_this_runs():
    text = PAGE.read_text()
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    current = "\n" + table() + "\n"
    if os.environ.get("NDGATHER_BLESS"):
        PAGE.write_text(text[:start] + current + text[stop:])
        return
    assert text[start:stop] == current, (
        "docs/concepts/pytorch.md's table is out of date: run NDGATHER_BLESS=1 pytest "
        "tests/test_torch_table.py (with --frameworks' venv)\n" + current)
