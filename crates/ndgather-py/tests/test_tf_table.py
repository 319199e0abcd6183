"""The table of what passes under TensorFlow (issue 55): each op of the TensorFlow front end
under each of TensorFlow's transformations, run and checked here, and the table in
``docs/concepts/tensorflow.md`` that must equal the run's (``NDGATHER_BLESS=1`` rewrites
it).

A cell is "yes" where the op runs and equals its reference: a gradient TensorFlow's
numerical one (``tf.test.compute_gradient``, float64), a ``tf.function``'s result and
gradients the eager ones, ``tf.vectorized_map`` the op once per element, a loaded
SavedModel the function it saved. Elsewhere it names the exception raised, and a wrong
result fails the test.

TensorFlow runs with ``scripts/test.sh --frameworks``; elsewhere this file is skipped.
"""

import pytest
from transform_table import check_page, rows, same, table

tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed: run "
                         "scripts/test.sh --frameworks")

ROWS = rows(tf.constant, tf.constant)


def _weights(out):
    n = int(tf.size(out))
    return tf.reshape(tf.range(n, dtype=out.dtype) * 0.25 - 1.0, tf.shape(out))


def _tape(f, inputs):
    """The result, and the gradient of ``sum(f * w)`` for each input."""
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        out = f(*inputs)
        loss = tf.reduce_sum(out * _weights(out))
    return out, [tf.convert_to_tensor(g) for g in tape.gradient(loss, inputs)]


def tape_gradients(f, inputs):
    theirs, ours = tf.test.compute_gradient(f, list(inputs))
    for t, o in zip(theirs, ours):
        same(o, t, "compute_gradient", tol=1e-6)


def in_function(f, inputs):
    same(tf.function(f)(*inputs), f(*inputs), "tf.function")


def function_tape(f, inputs):
    out, want = _tape(f, inputs)
    got_out, got = tf.function(lambda *xs: _tape(f, list(xs)))(*inputs)
    same(got_out, out, "tf.function forward")
    for g, w in zip(got, want):
        same(g, w, "tf.function gradients")


def vectorized(f, inputs):
    batch = [tf.stack([x, x * 2.0 - 1.0, x + 0.5]) for x in inputs]
    # (Vectorised, not TensorFlow's fallback of a while_loop, one call per element.)
    got = tf.vectorized_map(lambda xs: f(*xs), batch, fallback_to_while_loop=False)
    same(got, tf.stack([f(*(x[b] for x in batch)) for b in range(3)]), "vectorized_map")


def xla(f, inputs):
    same(tf.function(f, jit_compile=True)(*inputs), f(*inputs), "jit_compile")


def saved(f, inputs):
    import tempfile

    class Module(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(x.shape, x.dtype) for x in inputs])
        def __call__(self, *xs):
            return f(*xs)
    with tempfile.TemporaryDirectory() as d:
        tf.saved_model.save(Module(), d)
        same(tf.saved_model.load(d)(*inputs), f(*inputs), "SavedModel")


def forward_mode(f, inputs):
    """The tangent against central differences, where the op gives one (none is an
    error, not a zero)."""
    inputs = list(inputs)  # (the accumulator's primals and tangents: one structure)
    ones = [tf.ones_like(x) for x in inputs]
    with tf.autodiff.ForwardAccumulator(inputs, ones) as acc:
        out = f(*inputs)
    tangent = acc.jvp(out)
    if tangent is None:
        raise LookupError("no tangent")
    eps = 1e-6
    up = f(*(x + eps * v for x, v in zip(inputs, ones)))
    down = f(*(x - eps * v for x, v in zip(inputs, ones)))
    same(tangent, (up - down) / (2 * eps), "ForwardAccumulator", tol=1e-6)


def second_order(f, inputs):
    """The Hessian of ``sum(f(x)²)`` times ones, a tape over a tape (reverse over reverse)
    and an accumulator over a tape (forward over reverse), against central differences of
    the gradient."""
    inputs = list(inputs)

    def grads(xs):
        with tf.GradientTape() as tape:
            tape.watch(xs)
            loss = tf.reduce_sum(f(*xs) ** 2)
        return [tf.convert_to_tensor(g) for g in tape.gradient(loss, xs)]
    ones = [tf.ones_like(x) for x in inputs]
    eps = 1e-6
    up = grads([x + eps * v for x, v in zip(inputs, ones)])
    down = grads([x - eps * v for x, v in zip(inputs, ones)])
    want = [(u - d) / (2 * eps) for u, d in zip(up, down)]
    with tf.GradientTape() as outer:
        outer.watch(inputs)
        total = tf.add_n([tf.reduce_sum(g) for g in grads(list(inputs))])
    same([tf.convert_to_tensor(h) for h in outer.gradient(total, inputs)], want,
         "tape of tape", tol=1e-5)
    with tf.autodiff.ForwardAccumulator(inputs, ones) as acc:
        got = grads(list(inputs))
    same([tf.convert_to_tensor(acc.jvp(g)) for g in got], want, "accumulator of tape",
         tol=1e-5)


COLUMNS = [("`GradientTape`", tape_gradients), ("`tf.function`", in_function),
           ("`tf.function` and `GradientTape`", function_tape),
           ("`tf.vectorized_map`, no `while_loop`", vectorized), ("`jit_compile=True`", xla),
           ("SavedModel", saved), ("`ForwardAccumulator` (forward mode)", forward_mode),
           ("second order (tape of tape, accumulator of tape)", second_order)]


def test_the_pages_table_is_this_runs():
    check_page("tensorflow.md", "tf-table", "test_tf_table.py", table(COLUMNS, ROWS))
