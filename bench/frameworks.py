"""ndgather inside compiled framework functions against the framework's own op in the same
compiled function (issue 55). So far: JAX's `jax.jit`, `ng.gather` against `jnp.take`, on a
tiny call and on 100,000 rows of 64 float32. PyTorch's `torch.compile` and TensorFlow's
`tf.function`, and the suite's other cases, are not here yet.

    python bench/frameworks.py [--rounds 3]

Run it on a release build (`maturin develop --release`): the test build is slower.
"""

import argparse
import timeit

import jax
import jax.numpy as jnp
import numpy as np

import ndgather as ng

parser = argparse.ArgumentParser()
parser.add_argument("--rounds", type=int, default=3)
args = parser.parse_args()


def best(f, number, repeat=5):
    """The best time of one call, in seconds, over `repeat` runs of `number` calls."""
    return min(timeit.repeat(lambda: f().block_until_ready(), number=number,
                             repeat=repeat)) / number


ours = jax.jit(lambda p, i: ng.gather(p, i))
theirs = jax.jit(lambda p, i: jnp.take(p, i, axis=0))
rng = np.random.default_rng(0)
cases = {
    "tiny (3 ids, 16 x 4)": (jnp.arange(64.0, dtype=jnp.float32).reshape(16, 4),
                             jnp.array([3, 1, 7], jnp.int32), 2000, 1e6, "us"),
    "rows (100k ids, 100k x 64)": (
        jnp.asarray(rng.standard_normal((100_000, 64)), jnp.float32),
        jnp.asarray(rng.integers(0, 100_000, 100_000), jnp.int32), 20, 1e3, "ms"),
}
for name, (params, ids, number, scale, unit) in cases.items():
    for f in (ours, theirs):
        f(params, ids).block_until_ready()
    for _ in range(args.rounds):
        a = best(lambda: ours(params, ids), number) * scale
        b = best(lambda: theirs(params, ids), number) * scale
        print(f"jax.jit {name}: ng.gather {a:.2f} {unit}, jnp.take {b:.2f} {unit} "
              f"({a / b:.2f}x)")
