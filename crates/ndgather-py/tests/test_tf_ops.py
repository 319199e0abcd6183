"""ndgather's ops as native TensorFlow ops (issue 55): the custom op library that
``ndgather._tf`` compiles against the installed TensorFlow, inside ``tf.function``, a TF1
graph and ``tf.GradientTape``, against TensorFlow's own ops and gradients.

TensorFlow is large and not in CI's venv: ``scripts/test.sh --frameworks`` installs it
(pinned in requirements-frameworks.txt) into a venv of its own and runs this file there.
Elsewhere it is skipped, saying so.
"""

import os
import stat

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed: run "
                         "scripts/test.sh --frameworks")
import ndgather as ng  # noqa: E402
from ndgather import _native_build, _tf  # noqa: E402

RNG = np.random.default_rng(55)
TABLE = tf.constant(RNG.standard_normal((6, 4)).astype(np.float32))
IDS = tf.constant([5, 1, 1, 0])


def grads(f, x):
    """The gradient of sum(f(x) * w) for a fixed random w, dense."""
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        w = tf.constant(RNG.standard_normal(y.shape).astype(y.dtype.as_numpy_dtype))
        loss = tf.reduce_sum(y * w)
    return tf.convert_to_tensor(tape.gradient(loss, x)), w


def both(ours, theirs, x):
    """Values and gradients of ``ours`` and ``theirs`` on ``x``, eagerly and in tf.function,
    with the same upstream weights."""
    for wrap in (lambda f: f, tf.function):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a, b = wrap(ours)(x), wrap(theirs)(x)
            w = tf.constant(RNG.standard_normal(a.shape).astype(a.dtype.as_numpy_dtype))
            la, lb = tf.reduce_sum(a * w), tf.reduce_sum(b * w)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        ga, gb = tape.gradient(la, x), tape.gradient(lb, x)
        np.testing.assert_allclose(tf.convert_to_tensor(ga).numpy(),
                                   tf.convert_to_tensor(gb).numpy(), rtol=1e-6, atol=1e-6)


def test_gather_equals_tf_gather_with_its_gradient():
    params = tf.constant(RNG.standard_normal((3, 5, 4)).astype(np.float32))
    both(lambda p: ng.gather(p, IDS[:3] % 3), lambda p: tf.gather(p, IDS[:3] % 3), params)
    both(lambda p: ng.gather(p, [4, 0, 0], axis=1), lambda p: tf.gather(p, [4, 0, 0], axis=1),
         params)
    ids = tf.constant([[1, 0], [3, 3], [0, 4]])
    both(lambda p: ng.gather(p, ids, axis=1, batch_dims=1),
         lambda p: tf.gather(p, ids, axis=1, batch_dims=1), params)


def test_gather_along_axis_0_gives_indexed_slices_as_tf_does():
    with tf.GradientTape() as tape:
        tape.watch(TABLE)
        loss = tf.reduce_sum(ng.gather(TABLE, IDS))
    g = tape.gradient(loss, TABLE)
    assert isinstance(g, tf.IndexedSlices)
    with tf.GradientTape() as tape:
        tape.watch(TABLE)
        want = tape.gradient(tf.reduce_sum(tf.gather(TABLE, IDS)), TABLE)
    np.testing.assert_array_equal(g.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(g.values.numpy(), want.values.numpy())
    # A variable's optimizer step takes them as TensorFlow's own.
    v = tf.Variable(TABLE)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(ng.gather(v, IDS))
    tf.keras.optimizers.SGD(1.0).apply_gradients([(tape.gradient(loss, v), v)])
    np.testing.assert_allclose(v.numpy()[1], TABLE.numpy()[1] - 2)


def test_clamp_runs_inside_tf_function_where_tf_has_no_policy():
    @tf.function
    def f(p, i):
        return ng.gather(p, i, bad_indices="clamp")

    got = f(TABLE, tf.constant([9, -3, 2]))
    np.testing.assert_array_equal(got.numpy(), tf.gather(TABLE, [5, 0, 2]).numpy())
    g, w = grads(lambda p: f(p, tf.constant([9, 9, 0])), TABLE)
    want = np.zeros((6, 4), np.float32)
    want[5] = w.numpy()[0] + w.numpy()[1]
    want[0] = w.numpy()[2]
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6)


def test_errors_are_tensorflows_own_inside_tf_function():
    @tf.function
    def f(p, i):
        return ng.gather(p, i)

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 7 is not in \[0, 6\)"):
        f(TABLE, tf.constant([0, 7]))


def test_gather_nd_and_take_along_axis_equal_tensorflows():
    params = tf.constant(RNG.standard_normal((4, 3, 2)).astype(np.float64))
    idx = tf.constant([[3, 1], [0, 0], [3, 1]])
    both(lambda p: ng.gather_nd(p, idx), lambda p: tf.gather_nd(p, idx), params)
    along = tf.constant(RNG.integers(0, 3, (4, 5, 2)))
    both(lambda p: ng.take_along_axis(p, along, axis=1),
         lambda p: tf.experimental.numpy.take_along_axis(p, along, axis=1), params)


@pytest.mark.parametrize("kind", ["update", "add", "sub", "min", "max"])
def test_tensor_scatter_equals_tensorflows(kind):
    tensor = tf.constant(RNG.standard_normal((5, 3)).astype(np.float32))
    idx = tf.constant([[4], [1], [2]])
    updates = tf.constant(RNG.standard_normal((3, 3)).astype(np.float32))
    ours = getattr(ng, f"tensor_scatter_nd_{kind}")
    theirs = getattr(tf, f"tensor_scatter_nd_{kind}")
    both(lambda t: ours(t, idx, updates), lambda t: theirs(t, idx, updates), tensor)
    both(lambda u: ours(tensor, idx, u), lambda u: theirs(tensor, idx, u), updates)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reductions_equal_tensorflows(reduce):
    data = tf.constant(RNG.standard_normal((6, 2)).astype(np.float32))
    sorted_ids = tf.constant([0, 0, 1, 3, 3, 3])
    both(lambda d: getattr(ng, f"segment_{reduce}")(d, sorted_ids),
         lambda d: getattr(tf.math, f"segment_{reduce}")(d, sorted_ids), data)
    ids = tf.constant([2, 0, 2, -1, 1, 0])
    both(lambda d: getattr(ng, f"unsorted_segment_{reduce}")(d, ids, 4),
         lambda d: getattr(tf.math, f"unsorted_segment_{reduce}")(d, ids, 4), data)


def test_embedding_lookup_equals_tensorflows():
    shards = [tf.constant([[0.0], [2.0], [4.0]]), tf.constant([[1.0], [3.0]])]
    ids = tf.constant([[4, 3], [0, 1]])
    for strategy in ("mod", "div"):
        got = tf.function(lambda: ng.embedding_lookup(shards, ids, strategy))()
        want = tf.compat.v1.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_static_shapes_follow_the_ops_inference():
    seen = []

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32),
                                  tf.TensorSpec([None], tf.int32)])
    def f(p, i):
        out = ng.gather(p, i)
        seen.append(out.shape.as_list())
        return out

    f(TABLE, IDS)
    assert seen == [[None, 4]]

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def g(d):
        out = ng.unsorted_segment_sum(d, tf.constant([0, 1, 1]), 5)
        seen.append(out.shape.rank)
        return out

    g(tf.constant([1.0, 2.0, 3.0]))
    assert seen[-1] is None


def test_a_tf1_graph_runs_the_op():
    graph = tf.Graph()
    with graph.as_default():
        p = tf.compat.v1.placeholder(tf.float32, [None, 4])
        out = ng.gather(p, [2, 0], bad_indices="wrap")
        (grad,) = tf.gradients(tf.reduce_sum(out), [p])
    with tf.compat.v1.Session(graph=graph) as session:
        value, g = session.run([out, grad], {p: TABLE.numpy()})
    np.testing.assert_array_equal(value, TABLE.numpy()[[2, 0]])
    assert g.sum() == 8.0


def test_a_list_of_ints_is_one_index_tensor():
    @tf.function
    def f(p):
        return ng.gather(p, [3, 3])

    np.testing.assert_array_equal(f(TABLE).numpy(), TABLE.numpy()[[3, 3]])


def test_an_eager_tensor_no_tape_records_takes_the_dlpack_path():
    got = ng.gather(TABLE, [3, 9], bad_indices="clamp")
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, TABLE.numpy()[[3, 5]])
    with pytest.raises(ng.InvalidArgumentError, match=r"indices\[0\] = 9 is not in \[0, 6\)"):
        ng.gather(TABLE, [9])
    # A ragged operand takes the ragged path, eagerly.
    rt = tf.ragged.constant([[1, 2], [3]])
    assert ng.gather(rt, tf.constant([1, 0])).to_list() == [[3], [1, 2]]


def test_fill_value_and_variables_with_take():
    @tf.function
    def f(p, i):
        return ng.gather(p, i, bad_indices="fill", fill_value=-1.5)

    got = f(TABLE, tf.constant([0, 8]))
    np.testing.assert_array_equal(got.numpy()[1], [-1.5] * 4)
    v = tf.Variable(TABLE)
    with tf.GradientTape() as tape:
        rows = ng.take(v, [1, 1], axis=0)
        loss = tf.reduce_sum(rows)
    np.testing.assert_array_equal(rows.numpy(), TABLE.numpy()[[1, 1]])
    g = tf.convert_to_tensor(tape.gradient(loss, v)).numpy()
    np.testing.assert_array_equal(g[1], [2.0] * 4)


def test_attributes_from_tensors_and_ops_without_a_gradient():
    data = tf.constant([1.0, 2.0, 3.0])
    # An eager tensor is read as the attribute's value; a graph's is refused, saying why.
    with tf.GradientTape() as tape:
        tape.watch(data)
        sums = ng.unsorted_segment_sum(data, tf.constant([0, 1, 1]), tf.constant(2))
    np.testing.assert_array_equal(sums.numpy(), [1.0, 5.0])

    @tf.function
    def f(d):
        return ng.unsorted_segment_sum(d, tf.constant([0, 1, 1]), tf.shape(d)[0])

    with pytest.raises(TypeError, match="num_segments must be known when the op is built"):
        f(data)
    # scatter_reduce is PyTorch's op, with its gradient: a sum's is tensor_scatter_nd_add's.
    x = tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    both(lambda t: ng.scatter_reduce(t, 0, tf.constant([[2, 0], [2, 2]]), t[:2] * 2.0, "sum"),
         lambda t: tf.tensor_scatter_nd_add(
             t, tf.constant([[[2, 0], [0, 1]], [[2, 0], [2, 1]]]), t[:2] * 2.0), x)


def test_scatter_nd_and_gather_segment_gradients_equal_tensorflows():
    updates = tf.constant(RNG.standard_normal((6, 4)).astype(np.float32))
    ids = tf.constant([[7], [0], [7], [2], [3], [1]])
    both(lambda u: ng.scatter_nd(ids, u, [8, 4]), lambda u: tf.scatter_nd(ids, u, [8, 4]),
         updates)
    x = tf.constant(RNG.standard_normal((6, 4)).astype(np.float32))
    src, dst = tf.constant([0, 5, 5, 2, 1]), tf.constant([2, 0, 2, 2, 1])
    for reduce in ("sum", "mean", "max", "min", "prod", "sqrt_n"):
        theirs = getattr(tf.math, f"unsorted_segment_{reduce}")
        both(lambda x: ng.gather_segment(x, src, dst, 3, reduce),
             lambda x: theirs(tf.gather(x, src), dst, 3), x)


def test_embedding_lookups_gradients_equal_tensorflows():
    shards = [tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]),
              tf.constant([[1.0, 7.0], [3.0, 9.0]])]
    ids = tf.constant([[4, 3], [0, 4]])
    w = tf.constant(RNG.standard_normal((2, 2, 2)).astype(np.float32))
    for strategy in ("mod", "div"):
        for wrap in (lambda f: f, tf.function):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(shards)
                ours = tf.reduce_sum(wrap(lambda: ng.embedding_lookup(shards, ids, strategy))() * w)
                theirs = tf.reduce_sum(tf.compat.v1.nn.embedding_lookup(
                    shards, ids, partition_strategy=strategy) * w)
            for a, b in zip(tape.gradient(ours, shards), tape.gradient(theirs, shards)):
                np.testing.assert_array_equal(tf.convert_to_tensor(a).numpy(),
                                              tf.convert_to_tensor(b).numpy())
    # One table: IndexedSlices, as TensorFlow's, which an optimizer applies as rows.
    with tf.GradientTape() as tape:
        tape.watch(TABLE)
        g = tape.gradient(tf.reduce_sum(ng.embedding_lookup(TABLE, IDS)), TABLE)
    with tf.GradientTape() as tape:
        tape.watch(TABLE)
        want = tape.gradient(tf.reduce_sum(tf.nn.embedding_lookup(TABLE, IDS)), TABLE)
    assert isinstance(g, tf.IndexedSlices) and isinstance(want, tf.IndexedSlices)
    np.testing.assert_array_equal(g.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(g.values.numpy(), want.values.numpy())
    # Ids of a type TensorFlow's lookup refuses give int64 rows, which an optimizer takes;
    # with max_norm the gradient is dense, through the clipping, as TensorFlow's values.
    v = tf.Variable(TABLE)
    with tf.GradientTape() as tape:
        g = tape.gradient(tf.reduce_sum(ng.embedding_lookup(v, tf.constant([1, 1], tf.uint8))), v)
    assert g.indices.dtype == tf.int64
    tf.keras.optimizers.SGD(1.0).apply_gradients([(g, v)])
    np.testing.assert_allclose(v.numpy()[1], TABLE.numpy()[1] - 2)
    for wrap in (lambda f: f, tf.function):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(TABLE)
            ours = tf.reduce_sum(wrap(lambda: ng.embedding_lookup(TABLE, IDS, max_norm=2.0))())
            theirs = tf.reduce_sum(tf.nn.embedding_lookup(TABLE, IDS, max_norm=2.0))
        a, b = tape.gradient(ours, TABLE), tape.gradient(theirs, TABLE)
        np.testing.assert_allclose(tf.convert_to_tensor(a).numpy(),
                                   tf.convert_to_tensor(b).numpy(), rtol=1e-6)


def test_strings_are_read_eagerly_and_refused_in_a_graph_saying_why():
    # TensorFlow's own __dlpack__ stops the process on a string tensor: never asked.
    got = ng.gather(tf.constant(["a", "bc"]), [1, 1])
    assert got.tolist() == [b"bc", b"bc"]

    @tf.function
    def f(s):
        return ng.gather(s, [1])

    with pytest.raises(tf.errors.InvalidArgumentError, match="strings"):
        f(tf.constant(["a", "b"]))


def test_no_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NDGATHER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    with pytest.raises(RuntimeError, match="could not be run"):
        _tf.build()


def test_the_default_cache_is_made_private_under_a_loose_umask(tmp_path, monkeypatch):
    monkeypatch.delenv("NDGATHER_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    old = os.umask(0o002)
    try:
        path = _native_build.cache_dir("tf")
    finally:
        os.umask(old)
    for p in (path, path.parent, path.parent.parent):
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o700, p


def test_a_planted_library_is_not_loaded(tmp_path):
    planted = tmp_path / "lib.so"
    planted.write_bytes(b"\x7fELF")
    os.chmod(planted, 0o666)
    with pytest.raises(PermissionError, match="not loaded"):
        _native_build.opened(str(planted))
    link = tmp_path / "link.so"
    link.symlink_to(planted)
    with pytest.raises(OSError):
        _native_build.opened(str(link))


def test_a_cache_others_may_write_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("NDGATHER_CACHE_DIR", str(shared))
    with pytest.raises(PermissionError, match="writable by others"):
        _tf.build()
    assert not stat.S_IMODE(os.stat(tmp_path).st_mode) & stat.S_IWOTH


def test_the_tensorflow_page_runs():
    import pathlib
    import subprocess
    import sys

    import test_readme
    page = pathlib.Path(__file__).parents[3] / "docs" / "concepts" / "tensorflow.md"
    text = "\n".join(test_readme.examples(page))
    done = subprocess.run([sys.executable, "-c", test_readme.RUN_DOCTEST, page.name],
                          input=text, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]


def test_embedding_bag_and_its_gradients_inside_tf_function():
    table = tf.constant(RNG.standard_normal((6, 3)).astype(np.float32))
    ids, offsets = tf.constant([1, 5, 5, 2]), tf.constant([0, 2])
    w = tf.constant([1.0, 2.0, 0.5, -1.0])
    up = tf.constant(RNG.standard_normal((2, 3)).astype(np.float32))
    segments = tf.constant([0, 0, 1, 1])
    for wrap in (lambda f: f, tf.function):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([table, w])
            ours = wrap(lambda t, w: ng.embedding_bag(t, ids, offsets, mode="sum",
                                                      per_sample_weights=w))(table, w)
            theirs = tf.math.segment_sum(tf.gather(table, ids) * w[:, None], segments)
            la, lb = tf.reduce_sum(ours * up), tf.reduce_sum(theirs * up)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
        for a, b in zip(tape.gradient(la, [table, w]), tape.gradient(lb, [table, w])):
            np.testing.assert_allclose(tf.convert_to_tensor(a).numpy(),
                                       tf.convert_to_tensor(b).numpy(), rtol=1e-5, atol=1e-6)
    # int32 ids with int64 offsets, as PyTorch promotes them.
    mixed = tf.function(lambda t: ng.embedding_bag(t, ids, tf.constant([0, 2], tf.int64),
                                                   mode="sum", per_sample_weights=w))
    np.testing.assert_allclose(mixed(table).numpy(), theirs.numpy(), rtol=1e-6)


def test_a_nul_in_a_raw_ops_attributes_is_refused():
    # A graph's NdgatherOp need not come from ndgather's Python: its kernel checks too.
    lib = _tf.library()
    for op, values in (("gather\0junk", []), ("gather", ["1\0junk"])):
        with pytest.raises(tf.errors.InvalidArgumentError, match="NUL character"):
            lib.ndgather_op(args=[tf.constant([1.0, 2.0]), tf.constant([1])], Tout=tf.float32,
                            op=op, arity=[1, 1], attr_names=["axis"][:len(values)],
                            attr_values=values, out_dims=[1], out_rank=1)
    # Nor a static shape that disagrees with itself, or a negative size, when the graph is
    # built.
    for dims, rank, why in (([1, 2], 1, "out_dims must have out_rank entries"),
                            ([-5], 1, "a size below -1")):
        with pytest.raises(ValueError, match=why):
            tf.function(lambda a, i: lib.ndgather_op(
                args=[a, i], Tout=tf.float32, op="gather", arity=[1, 1], out_dims=dims,
                out_rank=rank))(tf.constant([1.0, 2.0]), tf.constant([1]))


def _loops(types):
    return [t for t in types if "While" in t]


def _ops_of(f, *args):
    """The op types of ``f``'s graph as ``tf.function`` traces it, nested functions too."""
    graph = tf.function(f).get_concrete_function(*args).graph
    types = [op.type for op in graph.get_operations()]
    for inner in graph._functions.values():
        types += [n.op for n in inner.definition.node_def]
    return types


def test_vectorized_map_batches_a_gather_in_one_call():
    """``tf.vectorized_map`` of a gather of a batched table, or of batched indices alone,
    is one ``NdgatherOp`` (no while_loop), equal to TensorFlow's own gather per element."""
    table = tf.constant(RNG.standard_normal((6, 4)))
    batch = tf.stack([table, table * 2.0, table + 1.0])
    ids = tf.constant([5, 1, 1, 0])
    id_batch = tf.constant([[5, 1], [0, 0], [3, 2]])
    cases = [
        (lambda t: ng.gather(t, ids), batch, lambda t: tf.gather(t, ids)),
        (lambda i: ng.gather(table, i), id_batch, lambda i: tf.gather(table, i)),
        (lambda i: ng.gather(table, i % 4, axis=1), id_batch,
         lambda i: tf.gather(table, i % 4, axis=1)),
        (lambda t: ng.gather(t, tf.constant([[3, 0]] * 6), axis=1, batch_dims=1), batch,
         lambda t: tf.gather(t, tf.constant([[3, 0]] * 6), axis=1, batch_dims=1)),
        (lambda t: ng.gather_nd(t, tf.constant([[5, 3], [0, 1]])), batch,
         lambda t: tf.gather_nd(t, tf.constant([[5, 3], [0, 1]]))),
        (lambda i: ng.gather_nd(table, i[:, None]), id_batch,
         lambda i: tf.gather_nd(table, i[:, None])),
        (lambda t: ng.take_along_axis(t, tf.constant([[2, 0]] * 6), axis=1), batch,
         lambda t: tf.experimental.numpy.take_along_axis(t, tf.constant([[2, 0]] * 6), 1)),
        (lambda t: ng.gather(t, tf.constant([0, 9]), bad_indices="fill", fill_value=7.5),
         batch, lambda t: tf.stack([t[0], tf.fill([4], tf.constant(7.5, t.dtype))])),
    ]
    for ours, inputs, theirs in cases:
        got = tf.vectorized_map(ours, inputs, fallback_to_while_loop=False)
        want = tf.stack([theirs(x) for x in tf.unstack(inputs)])
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        # (The graph keeps the loop body's own op, unused, beside the batched one.)
        assert not _loops(_ops_of(lambda x: tf.vectorized_map(ours, x), inputs))
    # Its gradient is the op's.
    with tf.GradientTape() as tape:
        tape.watch(batch)
        loss = tf.reduce_sum(tf.vectorized_map(lambda t: ng.gather(t, ids), batch) ** 2)
    with tf.GradientTape() as theirs_tape:
        theirs_tape.watch(batch)
        want = tf.reduce_sum(tf.vectorized_map(lambda t: tf.gather(t, ids), batch) ** 2)
    np.testing.assert_array_equal(tf.convert_to_tensor(tape.gradient(loss, batch)).numpy(),
                                  tf.convert_to_tensor(theirs_tape.gradient(want, batch)))


def test_vectorized_map_of_the_other_ops_loops_or_says_why():
    """The other ops (and a shared table that one call would need tiled) run in
    TensorFlow's while_loop, once per element, where it may; else the error says why."""
    data = tf.constant(RNG.standard_normal((3, 6, 4)))
    seg = tf.constant([2, 0, 2, 1, 1, 0])
    got = tf.vectorized_map(lambda d: ng.unsorted_segment_sum(d, seg, 3), data)
    want = tf.stack([tf.math.unsorted_segment_sum(d, seg, 3) for d in tf.unstack(data)])
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(ValueError, match="ndgather batches a gather"):
        tf.vectorized_map(lambda d: ng.unsorted_segment_sum(d, seg, 3), data,
                          fallback_to_while_loop=False)
    table = tf.constant(RNG.standard_normal((6, 4)))
    ids = tf.constant([[[2, 0]] * 6] * 3)
    shared = tf.vectorized_map(lambda i: ng.gather(table, i, axis=1, batch_dims=1), ids)
    np.testing.assert_array_equal(shared.numpy(), np.stack(
        [tf.gather(table, i, axis=1, batch_dims=1).numpy() for i in ids]))
    assert _loops(_ops_of(lambda x: tf.vectorized_map(
        lambda i: ng.gather(table, i, axis=1, batch_dims=1), x), ids))
    # take_along_axis broadcasts the shared table instead: one call.
    along = tf.vectorized_map(lambda i: ng.take_along_axis(table, i, axis=-1), ids,
                              fallback_to_while_loop=False)
    np.testing.assert_array_equal(along.numpy(), np.stack(
        [np.take_along_axis(table.numpy(), i, axis=1) for i in ids.numpy()]))


def test_vectorized_map_of_an_unknown_rank_loops():
    """A rank the graph does not know: the while_loop, with the element's own checks (a
    negative axis is checked against the element's rank, not shifted by the batch)."""
    table = tf.constant(np.arange(10, dtype=np.float32).reshape(5, 2))
    unknown = [tf.TensorSpec(None, tf.int32)]
    f = tf.function(lambda x: tf.vectorized_map(lambda i: ng.gather(table, i, axis=1), x),
                    input_signature=unknown)
    ids = tf.constant([[1, 0], [0, 1], [1, 1]])
    np.testing.assert_array_equal(f(ids).numpy(), np.stack(
        [tf.gather(table, i, axis=1).numpy() for i in ids]))
    g = tf.function(lambda x: tf.vectorized_map(lambda i: ng.gather(x, i),
                                                tf.constant([[1, 0], [0, 1]])),
                    input_signature=[tf.TensorSpec(None, tf.float32)])
    assert g(table).shape == (2, 2, 2)
    cube = tf.constant(np.arange(24, dtype=np.float32).reshape(3, 4, 2))
    along = tf.constant((np.array([2, 0, 1])[:, None, None] * np.ones((1, 4, 2))).astype(np.int32))
    h = tf.function(lambda x, i: tf.vectorized_map(
        lambda a: ng.take_along_axis(a[0], a[1], axis=-3), (x, i)),
        input_signature=[tf.TensorSpec(None, tf.float32), tf.TensorSpec(None, tf.int32)])
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError, IndexError)):
        h(cube, along)


def _jvp(f, x, tangent):
    with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
        out = f(x)
    return out, acc.jvp(out)


def test_forward_mode_equals_tensorflows_own_where_the_op_is_linear():
    """``ForwardAccumulator`` of a gather (whose gradient is ``IndexedSlices``), a filled
    gather (a fill's tangent is zero) and a segment sum, against TensorFlow's own ops, eagerly
    and inside ``tf.function``; a max is refused in TensorFlow's words, with ndgather's
    reason."""
    tangent = tf.reshape(tf.range(24, dtype=tf.float32), (6, 4))
    segments = tf.constant([2, 0, 2, 1, 1, 0])
    cases = [
        (lambda x: ng.gather(x, IDS), lambda x: tf.gather(x, IDS)),
        (lambda x: ng.gather(x, tf.constant([1, 9]), bad_indices="fill", fill_value=7.5),
         lambda x: tf.concat([x[1:2], tf.fill([1, 4], 7.5)], 0)),
        (lambda x: ng.unsorted_segment_sum(x, segments, 3),
         lambda x: tf.math.unsorted_segment_sum(x, segments, 3)),
    ]
    for ours, theirs in cases:
        for wrap in (lambda f: f, tf.function):
            out, got = wrap(lambda x, t: _jvp(ours, x, t))(TABLE, tangent)
            want_out, want = _jvp(theirs, TABLE, tangent)
            np.testing.assert_array_equal(out, want_out)
            np.testing.assert_array_equal(got, tf.convert_to_tensor(want))
    with pytest.raises(LookupError, match="NdgatherOp: embedding_lookup: .* linear"):
        _jvp(lambda x: ng.embedding_lookup(x, IDS, max_norm=1.0), TABLE, tangent)


def test_forward_mode_of_a_max_min_or_product_equals_tensorflows_own():
    """``ForwardAccumulator`` of the routed ops (``_core.op_routed``: a segment max, min or
    product, a scatter's min or max), eagerly and inside ``tf.function``, against
    TensorFlow's own, which transposes their gradients: bit for bit, a tie of two and a
    dropped segment id included."""
    table = tf.tensor_scatter_nd_update(TABLE, [[2]], TABLE[:1])  # rows 0 and 2 tie
    tangent = tf.reshape(tf.range(24, dtype=tf.float32), (6, 4)) - 7.0
    segments = tf.constant([2, 0, 2, 1, -1, 0])
    where = tf.constant([[5], [1], [5]])
    cases = [(lambda x, r=r: getattr(ng, f"unsorted_segment_{r}")(x, segments, 3),
              lambda x, r=r: getattr(tf.math, f"unsorted_segment_{r}")(x, segments, 3))
             for r in ("max", "min", "prod")]
    cases += [(lambda x: ng.tensor_scatter_nd_max(x, where, x[:3] + 4.0),
               lambda x: tf.tensor_scatter_nd_max(x, where, x[:3] + 4.0)),
              (lambda x: ng.tensor_scatter_nd_min(x, where, x[3:] - 1.5),
               lambda x: tf.tensor_scatter_nd_min(x, where, x[3:] - 1.5))]
    for ours, theirs in cases:
        for wrap in (lambda f: f, tf.function):
            out, got = wrap(lambda x, t: _jvp(ours, x, t))(table, tangent)
            want_out, want = _jvp(theirs, table, tangent)
            np.testing.assert_array_equal(out, want_out)
            np.testing.assert_array_equal(got, want)
    # An accumulator around a tf.function: TensorFlow transposes the function's gradient,
    # whose gradient a max's has (its factors constant) and a product's not.
    ours, theirs = cases[0]
    got = _jvp(tf.function(ours), table, tangent)[1]
    np.testing.assert_array_equal(got, _jvp(tf.function(theirs), table, tangent)[1])
    with pytest.raises(LookupError, match="NdgatherGrad: unsorted_segment_prod.*inside the"):
        _jvp(tf.function(cases[2][0]), table, tangent)


def test_forward_mode_of_a_weighted_bag_by_the_product_rule():
    """A bag with ``per_sample_weights``, linear in its table and, apart, in its weights
    (``_core.op_multilinear``): the accumulator's tangent in both, eagerly and inside
    ``tf.function``, equals the same sums written with TensorFlow's ops."""
    table = tf.reshape(tf.range(12.0), (4, 3))
    ids, offsets = tf.constant([0, 2, 3, 1]), tf.constant([0, 2])
    weights = tf.constant([1.0, 2.0, 0.5, 3.0])
    tangents = [tf.fill((4, 3), 0.5), tf.constant([1.0, -1.0, 2.0, 0.25])]

    def ours(w, p):
        return ng.embedding_bag(w, ids, offsets, mode="sum", per_sample_weights=p)

    def theirs(w, p):
        return tf.math.segment_sum(tf.gather(w, ids) * p[:, None], [0, 0, 1, 1])

    def jvp(f, w, p, tw, tp):
        with tf.autodiff.ForwardAccumulator([w, p], [tw, tp]) as acc:
            out = f(w, p)
        return acc.jvp(out)
    want = tf.convert_to_tensor(jvp(theirs, table, weights, *tangents))
    for wrap in (lambda f: f, tf.function):
        got = wrap(lambda *a: jvp(ours, *a))(table, weights, *tangents)
        np.testing.assert_array_equal(got, want)


def test_second_derivatives_equal_tensorflows_own_where_the_op_is_linear():
    """A tape over a tape, and an accumulator over a tape, of ``sum(f(x)²)``: the gradient's
    gradient of a linear op is the op's tangent on the cotangents, a max's the routed
    tangent; a product has none."""
    def hessian_rows(f, x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                loss = tf.reduce_sum(f(x) ** 2)
            total = tf.reduce_sum(tf.convert_to_tensor(inner.gradient(loss, x)) * x)
        return tf.convert_to_tensor(outer.gradient(total, x))
    segments = tf.constant([2, 0, 2, 1, 1, 0])
    for ours, theirs in [
            (lambda x: ng.gather(x, IDS, axis=0, batch_dims=0), lambda x: tf.gather(x, IDS)),
            (lambda x: ng.gather(x, tf.constant([[3, 0]] * 6), axis=1, batch_dims=1),
             lambda x: tf.gather(x, tf.constant([[3, 0]] * 6), axis=1, batch_dims=1)),
            (lambda x: ng.tensor_scatter_nd_add(x, tf.constant([[5], [5]]), x[:2] * 2.0),
             lambda x: tf.tensor_scatter_nd_add(x, tf.constant([[5], [5]]), x[:2] * 2.0)),
            # A max's gradient: the routed tangent, its factors constant.
            (lambda x: ng.unsorted_segment_max(x, segments, 3),
             lambda x: tf.math.unsorted_segment_max(x, segments, 3))]:
        np.testing.assert_allclose(hessian_rows(ours, TABLE), hessian_rows(theirs, TABLE),
                                   rtol=1e-6)
    with pytest.raises(LookupError, match="NdgatherGrad: unsorted_segment_prod"):
        hessian_rows(lambda x: ng.unsorted_segment_prod(x, segments, 3), TABLE)
