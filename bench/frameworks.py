"""ndgather inside compiled framework functions against the framework's own op in the same
compiled function (issue 55): JAX's `jax.jit`, TensorFlow's `tf.function` and PyTorch's
`torch.compile`, each in one process with its peer, alternated per round.

Cases: a tiny call (3 ids into 16 x 4 float32), 100,000 rows of 64 float32, under
`tf.function` the clamp policy against TensorFlow's `tf.gather` of clipped ids (TensorFlow's
CPU gather has no policy of its own), and under `torch.compile` a training step (forward and
backward) of each size; for PyTorch also eager autograd's tiny call and training step (no
`torch.compile`), `torch.func`'s `vmap` of a gather (eager and compiled) and per-sample
gradients (`vmap` of `grad`).

    python bench/frameworks.py --framework jax [--rounds 3]
    .venv-frameworks/bin/python bench/frameworks.py --framework tf
    .venv-frameworks/bin/python bench/frameworks.py --framework torch

Run it on a release build of the extension (`maturin develop --release`, or the release
wheel on PYTHONPATH): the test build is slower.
"""

import argparse
import timeit

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--framework", choices=["jax", "tf", "torch"], default="jax")
parser.add_argument("--rounds", type=int, default=3)
args = parser.parse_args()

RNG = np.random.default_rng(0)
TINY = (np.arange(64.0, dtype=np.float32).reshape(16, 4), np.array([3, 1, 7], np.int32))
ROWS = (RNG.standard_normal((100_000, 64)).astype(np.float32),
        RNG.integers(0, 100_000, 100_000).astype(np.int32))
BAD = (ROWS[0], np.where(RNG.random(100_000) < 0.01, 200_000, ROWS[1]).astype(np.int32))


def best(f, number, repeat=5):
    """The best time of one call, in seconds, over `repeat` runs of `number` calls."""
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def compare(label, ours, theirs, inputs, number, scale, unit):
    """Rounds of `ours` against `theirs` on `inputs`, alternated; each checked equal first."""
    a, b = ours(*inputs), theirs(*inputs)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for _ in range(args.rounds):
        x = best(lambda: ours(*inputs), number) * scale
        y = best(lambda: theirs(*inputs), number) * scale
        print(f"{label}: ndgather {x:.2f} {unit}, peer {y:.2f} {unit} ({x / y:.2f}x)")


if args.framework == "jax":
    import jax
    import jax.numpy as jnp

    import ndgather as ng

    def ready(f):
        return lambda *a: f(*a).block_until_ready()

    ours = ready(jax.jit(lambda p, i: ng.gather(p, i)))
    theirs = ready(jax.jit(lambda p, i: jnp.take(p, i, axis=0)))
    tiny = [jnp.asarray(x) for x in TINY]
    rows = [jnp.asarray(x) for x in ROWS]
    compare("jax.jit tiny, ng.gather vs jnp.take", ours, theirs, tiny, 2000, 1e6, "us")
    compare("jax.jit rows, ng.gather vs jnp.take", ours, theirs, rows, 20, 1e3, "ms")
elif args.framework == "tf":
    import tensorflow as tf

    import ndgather as ng

    ours = tf.function(lambda p, i: ng.gather(p, i))
    theirs = tf.function(lambda p, i: tf.gather(p, i))
    tiny = [tf.constant(x) for x in TINY]
    rows = [tf.constant(x) for x in ROWS]
    compare("tf.function tiny, ng.gather vs tf.gather", ours, theirs, tiny, 2000, 1e6, "us")
    compare("tf.function rows, ng.gather vs tf.gather", ours, theirs, rows, 20, 1e3, "ms")
    clamp = tf.function(lambda p, i: ng.gather(p, i, bad_indices="clamp"))
    clipped = tf.function(
        lambda p, i: tf.gather(p, tf.clip_by_value(i, 0, tf.shape(p)[0] - 1)))
    compare("tf.function rows with 1% bad ids, clamp vs tf.gather(clip_by_value)", clamp,
            clipped, [tf.constant(x) for x in BAD], 20, 1e3, "ms")
else:
    import torch

    import ndgather as ng

    ours = torch.compile(lambda p, i: ng.gather(p, i), fullgraph=True)
    theirs = torch.compile(lambda p, i: torch.index_select(p, 0, i), fullgraph=True)
    tiny = [torch.from_numpy(x) for x in TINY[:1]] + [torch.from_numpy(TINY[1]).long()]
    rows = [torch.from_numpy(ROWS[0]), torch.from_numpy(ROWS[1]).long()]
    compare("torch.compile tiny, ng.gather vs index_select", ours, theirs, tiny, 2000, 1e6,
            "us")
    compare("torch.compile rows, ng.gather vs index_select", ours, theirs, rows, 20, 1e3, "ms")
    # Where the tiny call's time goes: the op called directly, without ng.gather's Python
    # (whose guards torch.compile checks on every call).
    ng._torch.native()
    direct = torch.compile(lambda p, i: torch.ops.ndgather.gather.native(
        p, i, "batch_dims=0;bad_indices=error"), fullgraph=True)
    # (A fresh index_select: the one above, called on rows too, now runs a dynamic graph.)
    fresh = torch.compile(lambda p, i: torch.index_select(p, 0, i), fullgraph=True)
    compare("torch.compile tiny, the op called directly vs index_select", direct, fresh,
            tiny, 2000, 1e6, "us")
    # And ng.gather without the guards on globals, PyTorch's own knob (the caller's globals'
    # guards go too): what the guards on ng.gather's Python cost.
    unguarded = torch.compile(lambda p, i: ng.gather(p, i), fullgraph=True, options={
        "guard_filter_fn": torch.compiler.skip_guard_on_globals_unsafe})
    compare("torch.compile tiny, ng.gather without guards on globals vs index_select",
            unguarded, fresh, tiny, 2000, 1e6, "us")

    def step(f):
        """A training step of `f`: its forward and backward, giving params' gradient."""
        compiled = torch.compile(lambda p, i: (f(p, i) ** 2).sum(), fullgraph=True)

        def run(p, i):
            p.grad = None
            compiled(p, i).backward()
            return p.grad
        return run

    tiny[0].requires_grad_(True)
    rows[0].requires_grad_(True)

    # Eager autograd, no torch.compile: the call that autograd records, and a training step.
    def eager_step(f):
        def run(p, i):
            p.grad = None
            (f(p, i) ** 2).sum().backward()
            return p.grad
        return run
    compare("eager autograd tiny call, ng.gather vs index_select",
            lambda p, i: ng.gather(p, i).detach(),
            lambda p, i: torch.index_select(p, 0, i).detach(), tiny, 2000, 1e6, "us")
    compare("eager autograd tiny training step, ng.gather vs index_select",
            eager_step(ng.gather), eager_step(lambda p, i: torch.index_select(p, 0, i)), tiny,
            1000, 1e6, "us")
    ours, theirs = step(ng.gather), step(lambda p, i: torch.index_select(p, 0, i))
    compare("torch.compile tiny training step, ng.gather vs index_select", ours, theirs, tiny,
            1000, 1e6, "us")
    compare("torch.compile rows training step, ng.gather vs index_select", ours, theirs, rows,
            5, 1e3, "ms")

    # torch.func: vmap of a gather of 32 id lists of 8 from one table of 1,000 x 64, and the
    # per-sample gradients of its squares' sum (vmap of grad), eagerly and compiled.
    from torch.func import grad, vmap
    table = torch.from_numpy(RNG.standard_normal((1000, 64)).astype(np.float32))
    batch = [table, torch.from_numpy(RNG.integers(0, 1000, (32, 8)))]
    ours = vmap(lambda p, i: ng.gather(p, i), in_dims=(None, 0))
    theirs = vmap(lambda p, i: torch.index_select(p, 0, i), in_dims=(None, 0))
    compare("torch.func vmap, ng.gather vs index_select", ours, theirs, batch, 200, 1e6, "us")
    compare("torch.compile of torch.func vmap, ng.gather vs index_select",
            torch.compile(ours, fullgraph=True), torch.compile(theirs, fullgraph=True), batch,
            200, 1e6, "us")
    ours = vmap(grad(lambda p, i: (ng.gather(p, i) ** 2).sum()), in_dims=(None, 0))
    theirs = vmap(grad(lambda p, i: (torch.index_select(p, 0, i) ** 2).sum()),
                  in_dims=(None, 0))
    compare("torch.func per-sample gradients, ng.gather vs index_select", ours, theirs, batch,
            20, 1e3, "ms")
