"""The table of what passes under PyTorch (issue 55): each op of the PyTorch front end under
each of PyTorch's transformations, run and checked here, and the table in
``docs/concepts/pytorch.md`` that must equal the run's (``NDGATHER_BLESS=1`` rewrites it).

A cell is "yes" where the op runs and equals its reference: a gradient PyTorch's numerical
one (``gradcheck``, in float64), a compiled or exported result the eager one, a ``vmap``
the op once per element, a ``torch.func`` gradient eager autograd's. Elsewhere it names the
exception raised, and a wrong result fails the test.

PyTorch runs with ``scripts/test.sh --frameworks``; elsewhere this file is skipped.
"""

import pytest
from transform_table import Wrong, check_page, rows, same, table

torch = pytest.importorskip("torch", reason="PyTorch is not installed: run "
                            "scripts/test.sh --frameworks")
import ndgather  # noqa: E402,F401 (after torch, as the docs ask: its ops defined at import)

func = torch.func

ROWS = rows(torch.tensor, torch.from_numpy)


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
    same(got_out, want_out, "forward")
    same(got, want, "gradients")


def exported(f, inputs):
    class Module(torch.nn.Module):
        def forward(self, *xs):
            return f(*xs)
    program = torch.export.export(Module(), tuple(inputs))
    same(program.module()(*inputs), f(*inputs), "exported")


def vmapped(f, inputs):
    """Every float input batched (``test_torch_func.py`` batches the indices too)."""
    batch = [torch.stack([x, x * 2.0 - 1.0, x + 0.5]) for x in inputs]
    same(func.vmap(f)(*batch), torch.stack([f(*(x[b] for x in batch)) for b in range(3)]),
          "vmap")


def reverse(f, inputs):
    out, want = _eager_grads(f, inputs)
    w = _weights(out)
    n = len(inputs)
    same(func.grad(lambda *xs: (f(*xs) * w).sum(), argnums=tuple(range(n)))(*inputs), want,
          "grad")
    _, vjp = func.vjp(f, *inputs)
    same(vjp(w), want, "vjp")
    same(func.jacrev(f)(*inputs), torch.autograd.functional.jacobian(f, tuple(inputs))[0],
          "jacrev")


def per_sample(f, inputs):
    batch = [torch.stack([x, x * 2.0 - 1.0, x + 0.5]) for x in inputs]
    w = _weights(f(*inputs))
    got = func.vmap(func.grad(lambda *xs: (f(*xs) * w).sum(),
                              argnums=tuple(range(len(inputs)))))(*batch)
    for b in range(3):
        leaves = [x[b].clone().requires_grad_(True) for x in batch]
        (f(*leaves) * w).sum().backward()
        same([g[b] for g in got], [x.grad for x in leaves], "per-sample")


def forward_mode(f, inputs):
    """The tangent against central differences, where the op gives one."""
    ones = tuple(torch.ones_like(x) for x in inputs)
    _, tangent = func.jvp(f, tuple(inputs), ones)
    eps = 1e-6
    up = f(*(x + eps * v for x, v in zip(inputs, ones)))
    down = f(*(x - eps * v for x, v in zip(inputs, ones)))
    same(tangent, (up - down) / (2 * eps), "jvp", tol=1e-6)


def second_order(f, inputs):
    """The Hessian of ``sum(f(x)²)`` times ones, forward over reverse (``jvp`` of
    ``grad``, as ``hessian`` computes) and reverse over reverse (``grad`` of ``grad``, and
    eager autograd's double backward), against central differences of the gradient."""
    def loss(*xs):
        return f(*xs).pow(2).sum()
    argnums = tuple(range(len(inputs)))
    ones = tuple(torch.ones_like(x) for x in inputs)
    eps = 1e-6
    up = func.grad(loss, argnums)(*(x + eps * v for x, v in zip(inputs, ones)))
    down = func.grad(loss, argnums)(*(x - eps * v for x, v in zip(inputs, ones)))
    want = [(u - d) / (2 * eps) for u, d in zip(up, down)]
    _, forward = func.jvp(func.grad(loss, argnums), tuple(inputs), ones)
    same(list(forward), want, "jvp of grad", tol=1e-5)
    reverse = func.grad(lambda *xs: sum(g.sum() for g in func.grad(loss, argnums)(*xs)),
                        argnums)(*inputs)
    same(list(reverse), want, "grad of grad", tol=1e-5)
    # And eager autograd's: `create_graph=True`, then another backward.
    leaves = [x.detach().clone().requires_grad_(True) for x in inputs]
    grads = torch.autograd.grad(loss(*leaves), leaves, create_graph=True)
    eager = torch.autograd.grad(sum(g.sum() for g in grads), leaves)
    same(list(eager), want, "create_graph", tol=1e-5)


COLUMNS = [("autograd", autograd), ("`torch.compile`, forward and backward", compiled),
           ("`torch.export`", exported), ("`vmap`", vmapped),
           ("`grad`, `vjp`, `jacrev`", reverse), ("`vmap` of `grad`", per_sample),
           ("`jvp` (forward mode)", forward_mode),
           ("second order (`hessian`, `grad` of `grad`, `create_graph=True`)", second_order)]


def test_the_pages_table_is_this_runs():
    check_page("pytorch.md", "torch-table", "test_torch_table.py", table(COLUMNS, ROWS))
