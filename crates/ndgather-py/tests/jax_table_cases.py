"""The table of what passes under JAX (issue 55): each op of the JAX front end under each of
JAX's transformations, run and checked here, and the table in ``docs/concepts/jax.md``
that must equal the run's (``NDGATHER_BLESS=1`` rewrites it).

A cell is "yes" where the op runs and equals its reference: ``jax.jit`` the NumPy path, a
gradient the numerical one (``jax.test_util.check_grads`` and central differences, in
float64), a ``vmap`` or ``lax.scan`` the op once per element, a checkpointed or exported
function the plain one. Elsewhere it names the exception raised, and a wrong result fails
the test.

Run in a child process with ``JAX_ENABLE_X64=1`` (``test_jax_ops.py``): JAX's threads and
forking tests do not share a process, and float64 needs x64.
"""

import numpy as np
import pytest
from transform_table import check_page, rows, same, table


jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
import jax.export  # noqa: E402
import jax.test_util  # noqa: E402

ROWS = rows(np.array, lambda a: a)


def _batch(inputs):
    return [jnp.stack([x, x * 2.0 - 1.0, x + 0.5]) for x in map(jnp.asarray, inputs)]


def _weights(out):
    return jnp.arange(out.size, dtype=out.dtype).reshape(out.shape) * 0.25 - 1.0


def _loss(f, w):
    return lambda *xs: (f(*xs) * w).sum()


def jitted(f, inputs):
    same(jax.jit(f)(*map(jnp.asarray, inputs)), f(*inputs), "jit")


def reverse(f, inputs):
    """``check_grads``' numerical VJP check, and ``jacrev`` against central differences."""
    xs = [jnp.asarray(x) for x in inputs]
    jax.test_util.check_grads(f, xs, order=1, modes=("rev",))
    jac = jax.jacrev(f, argnums=0)(*xs)
    eps = 1e-6
    flat = np.asarray(inputs[0]).reshape(-1)
    for k in range(flat.size):
        step = np.zeros_like(flat)
        step[k] = eps
        up = f(*[jnp.asarray((flat + step).reshape(inputs[0].shape)), *xs[1:]])
        down = f(*[jnp.asarray((flat - step).reshape(inputs[0].shape)), *xs[1:]])
        same(jac.reshape(*np.shape(up), -1)[..., k], (np.asarray(up) - np.asarray(down))
              / (2 * eps), "jacrev", tol=1e-6)


def vmapped(f, inputs):
    batch = _batch(inputs)
    same(jax.vmap(f)(*batch), np.stack([f(*(x[b] for x in batch)) for b in range(3)]),
          "vmap")


def per_sample(f, inputs):
    batch = _batch(inputs)
    w = _weights(f(*map(jnp.asarray, inputs)))
    n = len(inputs)
    got = jax.vmap(jax.grad(_loss(f, w), argnums=tuple(range(n))))(*batch)
    for b in range(3):
        want = jax.grad(_loss(f, w), argnums=tuple(range(n)))(*(x[b] for x in batch))
        for g, e in zip(got, want):
            same(g[b], e, "per-sample")


def checkpointed(f, inputs):
    xs = [jnp.asarray(x) for x in inputs]
    w = _weights(f(*xs))
    n = tuple(range(len(xs)))
    got = jax.grad(_loss(jax.checkpoint(f), w), argnums=n)(*xs)
    for g, e in zip(got, jax.grad(_loss(f, w), argnums=n)(*xs)):
        same(g, e, "checkpoint")


def scanned(f, inputs):
    batch = _batch(inputs)
    _, got = jax.lax.scan(lambda c, xs: (c, f(*xs)), 0.0, batch)
    same(got, np.stack([f(*(x[b] for x in batch)) for b in range(3)]), "scan")


def exported(f, inputs):
    """Serialised and called again, with ndgather's custom calls allowed (JAX refuses any
    target without a compatibility guarantee unless told)."""
    xs = [jnp.asarray(x) for x in inputs]
    allowed = [jax.export.DisabledSafetyCheck.custom_call(t) for t in ("ndgather",
                                                                        "ndgather_grad")]
    program = jax.export.export(jax.jit(f), disabled_checks=allowed)(*xs)
    again = jax.export.deserialize(program.serialize())
    same(again.call(*xs), f(*xs), "export")


def forward_mode(f, inputs):
    """The tangent against central differences, where the op gives one."""
    xs = [jnp.asarray(x) for x in inputs]
    ones = [jnp.ones_like(x) for x in xs]
    _, tangent = jax.jvp(f, xs, ones)
    eps = 1e-6
    up = f(*(x + eps * v for x, v in zip(xs, ones)))
    down = f(*(x - eps * v for x, v in zip(xs, ones)))
    same(tangent, (np.asarray(up) - np.asarray(down)) / (2 * eps), "jvp", tol=1e-6)


def second_order(f, inputs):
    """The Hessian of ``sum(f(x)²)`` times ones, forward over reverse (``jvp`` of ``grad``,
    as ``jax.hessian`` computes) and reverse over reverse (``grad`` of ``grad``), against
    central differences of the gradient."""
    xs = [jnp.asarray(x) for x in inputs]
    ones = [jnp.ones_like(x) for x in xs]
    argnums = tuple(range(len(xs)))

    def loss(*ys):
        return (f(*ys) ** 2).sum()
    grads = jax.grad(loss, argnums)
    eps = 1e-6
    up = grads(*(x + eps * v for x, v in zip(xs, ones)))
    down = grads(*(x - eps * v for x, v in zip(xs, ones)))
    want = [(np.asarray(u) - np.asarray(d)) / (2 * eps) for u, d in zip(up, down)]
    _, forward = jax.jvp(grads, xs, ones)
    same(list(forward), want, "jvp of grad", tol=1e-5)
    reverse = jax.grad(lambda *ys: sum(g.sum() for g in grads(*ys)), argnums)(*xs)
    same(list(reverse), want, "grad of grad", tol=1e-5)


COLUMNS = [("`jax.jit`", jitted), ("`grad`, `vjp`, `jacrev`", reverse), ("`vmap`", vmapped),
           ("`vmap` of `grad`", per_sample), ("`jax.checkpoint`", checkpointed),
           ("`lax.scan`", scanned), ("`jax.export`", exported),
           ("`jvp` (forward mode)", forward_mode),
           ("second order (`hessian`, `grad` of `grad`)", second_order)]


def test_the_pages_table_is_this_runs():
    assert jax.config.jax_enable_x64, "run with JAX_ENABLE_X64=1 (test_jax_ops.py does)"
    check_page("jax.md", "jax-table", "jax_table_cases.py", table(COLUMNS, ROWS))
