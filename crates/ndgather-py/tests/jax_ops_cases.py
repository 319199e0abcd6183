"""ndgather's ops as native operations of JAX (issue 55): inside ``jax.jit``, ``jax.grad`` and
``jax.vmap`` the public functions stage an XLA custom call into the Rust core.

Results are compared bit for bit with the same function on NumPy arrays (the core's own
path) and with JAX's own ops; gradients with JAX's gradients of its own ops. The custom
call's handler is attacked through ``jax.ffi.ffi_call`` directly: every malformed call is an
error, never a crash. JAX is pinned in requirements-dev.txt, so these tests always run in CI.

They run in a child process (``test_jax_ops.py``): a process with JAX's threads should not
fork, and other tests fork.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ndgather as ng
from ndgather import _core

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

P = np.arange(24, dtype=np.float32).reshape(6, 4) * 0.5 - 3.0
IDS = np.array([5, 1, 1, 0], np.int32)


def same(jax_result, numpy_result):
    """Bit for bit: dtype, shape and values."""
    got = np.asarray(jax_result)
    assert got.dtype == numpy_result.dtype and got.shape == numpy_result.shape
    np.testing.assert_array_equal(got, numpy_result)


# Each case: a function of NumPy-or-JAX arrays, and its arguments.
CASES = {
    "gather": (lambda p, i: ng.gather(p, i), (P, IDS)),
    "gather axis=1": (lambda p, i: ng.gather(p, i, axis=1), (P, IDS[:3] % 4)),
    "gather batch_dims=1": (lambda p, i: ng.gather(p, i, axis=1, batch_dims=1),
                            (P, np.array([[3, 0]] * 6, np.int64))),
    "gather_nd": (lambda p, i: ng.gather_nd(p, i), (P, np.array([[5, 3], [0, 1]], np.int32))),
    "take_along_axis": (lambda a, i: ng.take_along_axis(a, i, axis=1),
                        (P, np.argsort(P, axis=1)[:, :2])),
    "take": (lambda a, i: ng.take(a, i, axis=0), (P, IDS)),
    "embedding_lookup (mod shards)": (
        lambda a, b, i: ng.embedding_lookup([a, b], i, partition_strategy="mod"),
        (P[0::2], P[1::2], IDS)),
    "tensor_scatter_nd_add": (lambda t, i, u: ng.tensor_scatter_nd_add(t, i, u),
                              (P, IDS[:, None], np.ones((4, 4), np.float32))),
    "tensor_scatter_nd_max": (lambda t, i, u: ng.tensor_scatter_nd_max(t, i, u),
                              (P, IDS[:, None], np.full((4, 4), 2.25, np.float32))),
    "scatter_nd": (lambda i, u: ng.scatter_nd(i, u, [7, 4]),
                   (IDS[:, None], np.ones((4, 4), np.float32))),
    "unsorted_segment_sum": (lambda d, s: ng.unsorted_segment_sum(d, s, 3),
                             (P, np.array([2, 0, 2, 1, 0, 2], np.int32))),
    "unsorted_segment_max": (lambda d, s: ng.unsorted_segment_max(d, s, 4),
                             (P, np.array([2, 0, 2, 1, 0, 2], np.int64))),
    "gather_segment": (lambda x, s, d: ng.gather_segment(x, s, d, 3, "mean"),
                       (P, IDS, np.array([2, 2, 0, 1], np.int32))),
    "scatter_reduce": (lambda t, i, s: ng.scatter_reduce(t, 0, i, s, "amax"),
                       (P, np.array([[1, 0, 5, 1]], np.int64), np.full((1, 4), 9.0, np.float32))),
}


@pytest.mark.parametrize("name", CASES)
def test_ops_inside_jit_equal_the_numpy_path(name):
    f, args = CASES[name]
    same(jax.jit(f)(*[jnp.asarray(a) for a in args]), f(*args))


def test_results_equal_jax_own_ops():
    p, i = jnp.asarray(P), jnp.asarray(IDS)
    same(jax.jit(lambda p, i: ng.gather(p, i, axis=0))(p, i), np.asarray(jnp.take(p, i, axis=0)))
    a = jnp.asarray(P)
    idx = jnp.asarray(np.argsort(P, axis=1))
    same(jax.jit(lambda a, i: ng.take_along_axis(a, i, axis=1))(a, idx),
         np.asarray(jnp.take_along_axis(a, idx, axis=1)))
    seg = jnp.array([2, 0, 2, 1, 0, 2])
    same(jax.jit(lambda d, s: ng.unsorted_segment_sum(d, s, 3))(a, seg),
         np.asarray(jax.ops.segment_sum(a, seg, 3)))


def test_gradients_equal_jax_own():
    p, i = jnp.asarray(P), jnp.asarray(IDS)
    w = jnp.arange(16.0, dtype=jnp.float32).reshape(4, 4)  # so that each row's cotangent differs

    def loss(gather):
        return lambda p: (gather(p) * w).sum()

    ours = jax.jit(jax.grad(loss(lambda p: ng.gather(p, i))))(p)
    same(ours, np.asarray(jax.grad(loss(lambda p: jnp.take(p, i, axis=0)))(p)))
    # Repeated ids (1, 1) sum their rows' cotangents.
    assert float(ours[1].sum()) == float((w[1] + w[2]).sum())

    nd = jnp.array([[5, 3], [0, 1], [5, 3]])
    same(jax.grad(lambda p: (ng.gather_nd(p, nd) * jnp.arange(3.0)).sum())(p),
         np.asarray(jax.grad(lambda p: (p[nd[:, 0], nd[:, 1]] * jnp.arange(3.0)).sum())(p)))

    along = jnp.asarray(np.argsort(P, axis=1)[:, :2])
    same(jax.grad(lambda a: (ng.take_along_axis(a, along, axis=1) ** 2).sum())(p),
         np.asarray(jax.grad(lambda a: (jnp.take_along_axis(a, along, axis=1) ** 2).sum())(p)))

    seg = jnp.array([2, 0, 2, 1, 0, 2])
    same(jax.grad(lambda d: (ng.unsorted_segment_sum(d, seg, 3) ** 2).sum())(p),
         np.asarray(jax.grad(lambda d: (jax.ops.segment_sum(d, seg, 3) ** 2).sum())(p)))

    u = jnp.ones((4, 4), jnp.float32)
    g_t, g_u = jax.grad(lambda t, u: (ng.tensor_scatter_nd_add(t, i[:, None], u) * 3.0).sum(),
                        argnums=(0, 1))(p, u)
    r_t, r_u = jax.grad(lambda t, u: (t.at[i].add(u) * 3.0).sum(), argnums=(0, 1))(p, u)
    same(g_t, np.asarray(r_t))
    same(g_u, np.asarray(r_u))


def test_vmap_maps_over_the_batch():
    ps = jnp.stack([jnp.asarray(P), jnp.asarray(P) + 1.0])
    ids = jnp.stack([jnp.asarray(IDS), jnp.asarray(IDS[::-1])])
    got = jax.vmap(lambda p, i: ng.gather(p, i))(ps, ids)
    same(got, np.asarray(jax.vmap(lambda p, i: jnp.take(p, i, axis=0))(ps, ids)))
    # And the gradient through the map.
    g = jax.grad(lambda ps: jax.vmap(lambda p, i: ng.gather(p, i))(ps, ids).sum())(ps)
    same(g, np.asarray(jax.grad(
        lambda ps: jax.vmap(lambda p, i: jnp.take(p, i, axis=0))(ps, ids).sum())(ps)))


def test_vmap_is_one_call_with_one_more_batch_dimension():
    rng = np.random.default_rng(0)
    ps = jnp.asarray(rng.standard_normal((5, 6, 4)), jnp.float32)
    ids = jnp.asarray(rng.integers(0, 6, (5, 3)))
    p0 = ps[0]

    def take(p, i, axis=0):
        return jnp.take(p, i, axis=axis)

    cases = [
        # both batched; along another axis; indices alone (the batch lands at the axis); a
        # negative axis; params alone; batch_dims inside the map
        (lambda p, i: ng.gather(p, i), take, (ps, ids), (0, 0)),
        (lambda p, i: ng.gather(p, i, axis=1), lambda p, i: take(p, i, 1), (ps, ids % 4), (0, 0)),
        (lambda p, i: ng.gather(p, i, axis=1), lambda p, i: take(p, i, 1), (p0, ids % 4),
         (None, 0)),
        (lambda p, i: ng.gather(p, i, axis=-1), lambda p, i: take(p, i, -1), (p0, ids % 4),
         (None, 0)),
        (lambda p, i: ng.gather(p, i), take, (ps, ids[0]), (0, None)),
        (lambda p, i: ng.gather(p, i, axis=1, batch_dims=1),
         lambda p, i: jax.vmap(take)(p, i), (ps, jnp.asarray(rng.integers(0, 4, (5, 6, 2)))),
         (0, 0)),
        (lambda p, i: ng.gather_nd(p, i), lambda p, i: p[i[:, 0], i[:, 1]],
         (ps, jnp.asarray(rng.integers(0, 4, (5, 3, 2)))), (0, 0)),
        (lambda p, i: ng.gather_nd(p, i), lambda p, i: p[i[:, 0], i[:, 1]],
         (p0, jnp.asarray(rng.integers(0, 4, (5, 3, 2)))), (None, 0)),
        (lambda p, i: ng.take_along_axis(p, i, axis=1),
         lambda p, i: jnp.take_along_axis(p, i, axis=1),
         (ps, jnp.asarray(rng.integers(0, 4, (5, 6, 2)))), (0, 0)),
        (lambda p, i: ng.take_along_axis(p, i, axis=1),
         lambda p, i: jnp.take_along_axis(p, i, axis=1),
         (p0, jnp.asarray(rng.integers(0, 4, (5, 6, 2)))), (None, 0)),
    ]
    for ours, theirs, args, axes in cases:
        same(jax.vmap(ours, in_axes=axes)(*args),
             np.asarray(jax.vmap(theirs, in_axes=axes)(*args)))
        # One custom call for the whole batch, inside jit too, and no loop around it.
        text = jax.jit(jax.vmap(ours, in_axes=axes)).lower(*args).as_text()
        assert text.count("custom_call @ndgather(") == 1 and "while" not in text, text
    # Gradients through the rule, both ways round, and nested maps.
    same(jax.jit(jax.grad(lambda ps: jax.vmap(ng.gather)(ps, ids).sum()))(ps),
         np.asarray(jax.grad(lambda ps: jax.vmap(take)(ps, ids).sum())(ps)))
    same(jax.vmap(jax.grad(lambda p, i: (ng.gather(p, i) ** 2).sum()))(ps, ids),
         np.asarray(jax.vmap(jax.grad(lambda p, i: (take(p, i) ** 2).sum()))(ps, ids)))
    same(jax.vmap(jax.vmap(ng.gather))(ps[:, None], ids[:, None]),
         np.asarray(jax.vmap(jax.vmap(take))(ps[:, None], ids[:, None])))


def test_each_call_site_keeps_its_own_configured_op():
    # The handler keeps recent call sites' ops by their attributes' bytes: sites that differ
    # in one attribute, more of them than it keeps, and each again, all give their own.
    p = jnp.arange(12.0, dtype=jnp.float32).reshape(4, 3)
    i = jnp.array([2, 9, 0])
    for _ in range(2):
        for fill in range(20):
            f = jax.jit(lambda p, i, fill=fill: ng.gather(p, i, bad_indices="fill",
                                                         fill_value=float(fill)))
            want = np.asarray(p)[[2, 0, 0]].copy()
            want[1] = fill
            same(f(p, i), want)
    both = jax.jit(lambda p, i: (ng.gather(p, i % 4, axis=0), ng.gather(p, i % 3, axis=1)))
    a, b = both(p, i)
    same(a, np.asarray(p)[[2, 1, 0]])
    same(b, np.asarray(p)[:, [2, 0, 0]])


def test_policies_inside_jit():
    p = jnp.asarray(P)
    bad = jnp.array([5, 9, -1])
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"indices\[1\] = 9 is not in \[0, 6\)"):
        jax.jit(lambda p, i: ng.gather(p, i))(p, bad).block_until_ready()
    same(jax.jit(lambda p, i: ng.gather(p, i, bad_indices="clamp"))(p, bad),
         np.asarray(jnp.take(p, bad, axis=0, mode="clip")))
    same(jax.jit(lambda p, i: ng.gather(p, i, bad_indices="fill"))(p, bad),
         np.asarray(jnp.take(p, jnp.array([5, 9, 99]), axis=0, mode="fill")))
    same(jax.jit(lambda p, i: ng.gather(p, i, bad_indices="fill", fill_value=7))(p, bad),
         ng.gather(P, np.asarray(bad), bad_indices="fill", fill_value=7))


def test_what_jax_cannot_stage_is_refused_at_trace_time():
    p = jnp.asarray(P)
    # An output shape that depends on values.
    with pytest.raises(ValueError, match="depends on their values"):
        jax.jit(lambda d, s: ng.segment_sum(d, s))(p, jnp.array([0, 0, 1, 1, 2, 2]))
    # The op's own shape errors, as it raises them eagerly.
    with pytest.raises(ng.InvalidArgumentError) as eager:
        ng.gather(P, IDS, batch_dims=3)
    with pytest.raises(ng.InvalidArgumentError) as traced:
        jax.jit(lambda p, i: ng.gather(p, i, batch_dims=3))(p, jnp.asarray(IDS))
    assert str(traced.value).startswith(str(eager.value)), (traced.value, eager.value)


# (JAX without x64 has no 64-bit types: its arrays of them are 32-bit.)
@pytest.mark.parametrize("dtype", ["bool", "bfloat16", "float16", "complex64", "int8",
                                   "uint16", "float8_e4m3fn"])
def test_element_types_inside_jit(dtype):
    values = (np.arange(24).reshape(6, 4) % 3).astype(jnp.dtype(dtype))
    same(jax.jit(lambda p, i: ng.gather(p, i))(jnp.asarray(values), jnp.asarray(IDS)),
         ng.gather(values, IDS))


@pytest.mark.parametrize("index_dtype", ["int8", "uint8", "uint16", "uint32", "int16"])
def test_index_types_inside_jit(index_dtype):
    ids = IDS.astype(index_dtype)
    same(jax.jit(lambda p, i: ng.gather(p, i))(jnp.asarray(P), jnp.asarray(ids)),
         ng.gather(P, ids))
    seg = np.array([2, 0, 2, 1, 0, 2], index_dtype)
    same(jax.jit(lambda d, s: ng.unsorted_segment_max(d, s, 3))(jnp.asarray(P),
                                                              jnp.asarray(seg)),
         ng.unsorted_segment_max(P, seg, 3))


def test_integer_mean_is_a_float_inside_jit():
    x = np.arange(12, dtype=np.int32).reshape(6, 2)
    src, dst = np.array([0, 5, 3], np.int32), np.array([1, 1, 0], np.int32)
    f = lambda x, s, d: ng.gather_segment(x, s, d, 2, "mean")  # noqa: E731
    same(jax.jit(f)(jnp.asarray(x), jnp.asarray(src), jnp.asarray(dst)), f(x, src, dst))


def test_arguments_as_the_eager_functions_take_them():
    i = jnp.asarray(IDS)
    # params as a list beside traced indices: JAX's conversion (float32) then the op.
    same(jax.jit(lambda i: ng.gather(P.tolist(), i))(i),
         ng.gather(np.asarray(jnp.asarray(P.tolist())), IDS))
    same(jax.jit(lambda i: ng.take_along_axis(P, i[:, None] % 4, axis=1))(jnp.arange(6)),
         ng.take_along_axis(P, np.arange(6)[:, None] % 4, axis=1))
    # axis=None flattens, as NumPy's take_along_axis does.
    same(jax.jit(lambda a, i: ng.take_along_axis(a, i, axis=None))(jnp.asarray(P), i),
         ng.take_along_axis(P, IDS, axis=None))
    with pytest.raises(ValueError, match="take's indices must be 1-d"):
        jax.jit(lambda a, i: ng.take(a, i, axis=0))(jnp.asarray(P), i[None])
    with pytest.raises(TypeError, match="out is not taken inside a JAX transformation"):
        jax.jit(lambda p, i: ng.gather(p, i, out=np.zeros((4, 4), np.float32)))(
            jnp.asarray(P), i)


def test_scatter_reduce_gradients():
    # PyTorch's op, PyTorch's gradient (the core's; tests/along_scatter.rs compares it with
    # PyTorch's autograd): a sum's is .at[].add's.
    p = jnp.asarray(P)
    index = jnp.array([[1, 0, 5, 1], [1, 1, 0, 2]])
    src = jnp.arange(8.0, dtype=jnp.float32).reshape(2, 4)
    w = jnp.arange(24.0, dtype=jnp.float32).reshape(6, 4)
    cols = jnp.arange(4)[None, :]

    def ours(t, s):
        return (ng.scatter_reduce(t, 0, index, s, "sum") * w).sum()

    def theirs(t, s):
        return (t.at[index, cols].add(s) * w).sum()
    got = jax.jit(jax.grad(ours, argnums=(0, 1)))(p, src)
    want = jax.grad(theirs, argnums=(0, 1))(p, src)
    same(got[0], np.asarray(want[0]))
    same(got[1], np.asarray(want[1]))
    # Without include_self, the input's elements written to have no gradient.
    g = jax.grad(lambda t: ng.scatter_reduce(t, 0, index, src, "amax", include_self=False).sum())(p)
    assert float(g[1, 0]) == 0.0 and float(g[2, 0]) == 1.0


def test_scatter_nd_and_gather_segment_gradients():
    p, ids = jnp.asarray(P), jnp.asarray(IDS)
    w = jnp.arange(28.0, dtype=jnp.float32).reshape(7, 4)
    got = jax.jit(jax.grad(lambda u: (ng.scatter_nd(ids[:, None], u, [7, 4]) * w).sum()))(p[:4])
    same(got, np.asarray(jax.grad(lambda u: (jnp.zeros((7, 4)).at[ids].add(u) * w).sum())(p[:4])))
    src, dst = jnp.array([0, 5, 5, 2, 1]), jnp.array([2, 0, 2, 2, 1])
    v = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
    got = jax.jit(jax.grad(lambda x: (ng.gather_segment(x, src, dst, 3) * v).sum()))(p)
    want = jax.grad(lambda x: (jax.ops.segment_sum(jnp.take(x, src, axis=0), dst, 3) * v).sum())
    same(got, np.asarray(want(p)))
    # Every reduction's is the unfused composition's (TensorFlow's gradients of both ops).
    for reduce in ("mean", "max", "min", "prod", "sqrt_n"):
        fused = jax.grad(lambda x: (ng.gather_segment(x, src, dst, 3, reduce) * v).sum())(p)
        unfused = getattr(ng, f"unsorted_segment_{reduce}")
        composed = jax.grad(lambda x: (unfused(ng.gather(x, src), dst, 3) * v).sum())(p)
        same(fused, np.asarray(composed))


def test_an_embedding_lookups_gradient_reaches_each_shard():
    p = jnp.asarray(P)
    ids = jnp.asarray([[5, 0], [5, 3]])
    w = jnp.arange(16.0, dtype=jnp.float32).reshape(2, 2, 4)
    got = jax.jit(jax.grad(lambda t: (ng.embedding_lookup(t, ids) * w).sum()))(p)
    same(got, np.asarray(jax.grad(lambda t: (jnp.take(t, ids, axis=0) * w).sum())(p)))
    # Two shards, "mod": id k is row k // 2 of shard k % 2; repeated ids sum in order.
    even, odd = p[0::2], p[1::2]
    g_even, g_odd = jax.jit(jax.grad(
        lambda e, o: (ng.embedding_lookup([e, o], ids) * w).sum(), argnums=(0, 1)))(even, odd)
    whole = np.asarray(jax.grad(lambda t: (jnp.take(t, ids, axis=0) * w).sum())(p))
    same(g_even, whole[0::2])
    same(g_odd, whole[1::2])


def test_float8_params_have_no_gradient():
    # float8 has no gradient in the core (the dtype table's grad role), though JAX counts it
    # as differentiable: asked for one, it is refused by name; not asked, the op runs.
    f8 = jnp.asarray(P.astype(jnp.dtype("float8_e4m3fn")))
    with pytest.raises(TypeError, match="no gradient for float8_e4m3fn"):
        jax.grad(lambda v: ng.gather(v, jnp.asarray(IDS)).astype(jnp.float32).sum())(f8)
    w = jnp.ones((4, 4), jnp.float32)
    g = jax.jit(jax.grad(
        lambda v, w: (ng.gather(v, jnp.asarray(IDS)).astype(jnp.float32) * w).sum(),
        argnums=1))(f8, w)
    same(g, ng.gather(np.asarray(f8), IDS).astype(np.float32))


def test_eager_arrays_still_take_the_dlpack_path():
    got = ng.gather(jnp.asarray(P), jnp.asarray(IDS))
    assert isinstance(got, jax.Array)
    same(got, ng.gather(P, IDS))


def test_the_structs_are_laid_out_as_jaxlib_header_says(tmp_path):
    """The handler mirrors the C API's structs (xla.rs); a C compiler reads jaxlib's header."""
    header = jax.ffi.include_dir()
    fields = _core.xla_layout()
    lines = [f'printf("%zu\\n", (size_t)({expr}));' for expr, _ in fields]
    source = tmp_path / "layout.c"
    source.write_text(textwrap.dedent("""\
        #include <stdio.h>
        #include <stddef.h>
        #include "xla/ffi/api/c_api.h"
        int main(void) {
        """) + "\n".join(lines) + "\nreturn 0;\n}\n")
    exe = tmp_path / "layout"
    cc = subprocess.run(["cc", "-I", header, str(source), "-o", str(exe)],
                        capture_output=True, text=True)
    if cc.returncode != 0:
        pytest.fail(f"the C compiler could not read jaxlib's header: {cc.stderr}")
    printed = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert [int(v) for v in printed.split()] == [size for _, size in fields], fields


def _raw_call(operands, result, **attrs):
    ng._jax._register()
    return jax.ffi.ffi_call("ndgather", result, **attrs.pop("_call", {}))(*operands, **attrs)


@pytest.mark.parametrize("attrs, message", [
    ({}, "names no op"),
    ({"ndgather_op": "gahter", "ndgather_arity": np.array([1, 1])}, "gahter"),
    ({"ndgather_op": "gather"}, "no ndgather_arity"),
    ({"ndgather_op": "gather", "ndgather_arity": np.array([1, 5])}, "arities"),
    ({"ndgather_op": "gather", "ndgather_arity": np.array([1, 1, 1])}, "arities"),
    ({"ndgather_op": "gather", "ndgather_arity": np.array([-1, 3])}, "ndgather_arity"),
    ({"ndgather_op": "gather", "ndgather_arity": np.array([2**62] * 4)}, "overflows"),
    ({"ndgather_op": "gather", "ndgather_arity": np.array([1, 1]), "ndgather_x": 1}, "ndgather_x"),
    ({"ndgather_op": "gather", "ndgather_arity": np.array([1, 1]), "axis": np.float32(1)},
     "attribute axis"),
    ({"ndgather_op": "gather", "ndgather_arity": np.array([1, 1]), "axis": "zero"}, "axis"),
    ({"ndgather_op": "gather", "ndgather_arity": np.array([1, 1]), "bad_indices": "wat"},
     "bad_indices"),
])
def test_a_hostile_custom_call_is_an_error(attrs, message):
    p, i = jnp.asarray(P), jnp.asarray(IDS)
    with pytest.raises(jax.errors.JaxRuntimeError, match=message):
        _raw_call([p, i], jax.ShapeDtypeStruct((4, 4), jnp.float32), **attrs).block_until_ready()


def test_a_raw_calls_fill_value_of_any_form_fills_in_params_dtype():
    # The handler hands a gather's params over as records of bytes only where the fill
    # element is bytes already; a number, or the dtype's default, is made in float32 here.
    p, bad = jnp.asarray(P), jnp.asarray(np.array([1, 99, -7], np.int32))
    call = {"ndgather_op": "gather", "ndgather_arity": np.array([1, 1]), "bad_indices": "fill"}
    shape = jax.ShapeDtypeStruct((3,) + P.shape[1:], jnp.float32)
    for fill, want in [({"fill_value": np.float64(7.5)}, 7.5),
                       ({"fill_value": np.frombuffer(np.float32(7.5).tobytes(), np.uint8)}, 7.5),
                       ({"fill_value": np.int64(3)}, 3.0),
                       ({}, np.nan)]:
        got = np.asarray(_raw_call([p, bad], shape, **call, **fill))
        expected = np.asarray(jnp.take(p, jnp.array([1, 99, -7]), axis=0, mode="fill",
                                       fill_value=want))
        assert got.tobytes() == expected.tobytes(), (fill, got, expected)


def test_a_wrong_result_buffer_is_an_error():
    p, i = jnp.asarray(P), jnp.asarray(IDS)
    ok = {"ndgather_op": "gather", "ndgather_arity": np.array([1, 1])}
    for result in (jax.ShapeDtypeStruct((4, 5), jnp.float32),
                   jax.ShapeDtypeStruct((4, 4), jnp.float64),
                   jax.ShapeDtypeStruct((4, 4), jnp.int32),
                   jax.ShapeDtypeStruct((), jnp.float32)):
        with pytest.raises(jax.errors.JaxRuntimeError):
            _raw_call([p, i], result, **ok).block_until_ready()
    # Two results where one is made.
    with pytest.raises(jax.errors.JaxRuntimeError, match="one result"):
        _raw_call([p, i], (jax.ShapeDtypeStruct((4, 4), jnp.float32),) * 2, **ok)[0] \
            .block_until_ready()


def test_a_result_that_aliases_an_argument_is_refused():
    # XLA may give the result the argument's own buffer when asked to alias them; the core
    # would then read and write one memory through two views.
    p = jnp.asarray(P)
    i = jnp.asarray(np.arange(6, dtype=np.int32))
    ok = {"ndgather_op": "gather", "ndgather_arity": np.array([1, 1])}
    f = jax.jit(lambda p, i: _raw_call([p, i], jax.ShapeDtypeStruct((6, 4), jnp.float32),
                                       _call={"input_output_aliases": {0: 0}}, **ok),
                donate_argnums=0)
    with pytest.raises(jax.errors.JaxRuntimeError, match="shares memory"):
        f(p, i).block_until_ready()


def test_the_gradient_handler_checks_its_buffers():
    ng._jax._register()
    p, i = jnp.asarray(P), jnp.asarray(IDS)
    call = jax.ffi.ffi_call("ndgather_grad", jax.ShapeDtypeStruct(P.shape, jnp.float32))
    with pytest.raises(jax.errors.JaxRuntimeError, match="upstream gradient"):
        call(p, i, ndgather_op="gather", ndgather_arity=np.array([1, 1])).block_until_ready()


def test_the_handler_survives_a_run_in_a_fresh_process():
    # Registration happens once per process, on first use, whatever imported JAX first.
    code = ("import jax, jax.numpy as jnp, ndgather as ng\n"
            "print(jax.jit(lambda p, i: ng.gather(p, i))(jnp.arange(6.0), jnp.array([5, 0])))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[5. 0.]"


def test_embedding_bag_and_its_gradients():
    t = jnp.asarray(P)
    ids, offsets = jnp.array([1, 5, 5, 2]), jnp.array([0, 2])
    w = jnp.array([1.0, 2.0, 0.5, -1.0], jnp.float32)
    up = jnp.arange(8.0, dtype=jnp.float32).reshape(2, 4)

    def ours(t, w):
        return (ng.embedding_bag(t, ids, offsets, mode="sum", per_sample_weights=w) * up).sum()

    def theirs(t, w):
        rows = jnp.take(t, ids, axis=0) * w[:, None]
        return (jnp.stack([rows[0:2].sum(0), rows[2:4].sum(0)]) * up).sum()
    got, want = jax.jit(jax.grad(ours, argnums=(0, 1)))(t, w), jax.grad(theirs, argnums=(0, 1))(t, w)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-6)
    same(jax.jit(lambda t: ng.embedding_bag(t, ids, offsets, mode="max"))(t),
         np.stack([np.maximum(P[1], P[5]), np.maximum(P[5], P[2])]))
    # Ids and offsets of two integer types whose common type JAX lacks without x64 (uint32
    # and int32 meet at int64): refused, rather than wrapped into int32.
    if not jax.config.jax_enable_x64:
        with pytest.raises(TypeError, match="jax_enable_x64"):
            jax.jit(lambda t: ng.embedding_bag(t, jnp.array([1, 5], jnp.uint32), offsets))(t)


def test_vmap_keeps_a_negative_batch_dims_and_broadcasts_a_shared_along_table():
    """``batch_dims=-1`` counts from the indices' end, which the batch leaves in place (it
    was made 0, and the batch then read indices as rows); ``take_along_axis`` of batched
    indices from one table: one more dimension of size 1 (``_batching.plan``)."""
    p = jnp.asarray(P)
    ids = jnp.array([[3, 0, 2]] * 6)

    def f(t):
        return ng.gather(t, ids, batch_dims=-1)
    batch = jnp.stack([p, p * 2])
    same(jax.vmap(f)(batch), np.stack([np.asarray(f(t)) for t in batch]))
    along = jnp.stack([jnp.array([[2, 0]] * 6)] * 3)

    def g(i):
        return ng.take_along_axis(p, i, axis=1)
    same(jax.vmap(g)(along), np.stack([np.asarray(g(i)) for i in along]))


def _forward_mode_equals(cases, p, tangent):
    """``jax.jvp`` and ``jax.jacfwd`` of each case's ours, eagerly and in ``jit``, equal
    its theirs, bit for bit."""
    for ours, theirs in cases:
        for wrap in (lambda f: f, jax.jit):
            out, got = wrap(lambda x, t: jax.jvp(ours, (x,), (t,)))(p, tangent)
            want_out, want = jax.jvp(theirs, (p,), (tangent,))
            same(out, np.asarray(want_out))
            same(got, np.asarray(want))
            same(wrap(jax.jacfwd(ours))(p), np.asarray(jax.jacfwd(theirs)(p)))


def test_forward_mode_equals_jaxs_own_where_the_op_is_linear():
    """``jax.jvp`` and ``jax.jacfwd`` (``vmap`` of ``jvp``), eagerly and in ``jit``, equal
    JAX's own ops where the registry says the op is linear: a gather, a filled gather (the
    fill's tangent is zero, as ``jnp.take``'s ``mode="fill"`` gives), a segment sum, a
    scatter add in both its inputs. A max is refused, saying why."""
    p = jnp.asarray(P)
    segments = jnp.asarray([2, 0, 2, 1, 1, 0])
    cases = [
        (lambda x: ng.gather(x, IDS), lambda x: jnp.take(x, IDS, axis=0)),
        (lambda x: ng.gather(x, np.array([1, 9]), bad_indices="fill", fill_value=7.5),
         lambda x: jnp.take(x, np.array([1, 9]), axis=0, mode="fill", fill_value=7.5)),
        (lambda x: ng.unsorted_segment_sum(x, segments, 3),
         lambda x: jax.ops.segment_sum(x, segments, 3)),
        (lambda x: ng.tensor_scatter_nd_add(x, np.array([[5], [5]]), x[:2] * 2.0),
         lambda x: x.at[np.array([5, 5])].add(x[:2] * 2.0)),
    ]
    tangent = jnp.arange(24.0, dtype=jnp.float32).reshape(6, 4)
    _forward_mode_equals(cases, p, tangent)
    with pytest.raises(NotImplementedError, match="reaches params: the op is not linear"):
        jax.jvp(lambda x: ng.embedding_lookup(x, IDS, max_norm=1.0), (p,), (tangent,))


def test_forward_mode_of_a_weighted_bag_by_the_product_rule():
    """``embedding_bag`` with ``per_sample_weights`` is linear in its table and, apart, in
    its weights (``_core.op_multilinear``): ``jax.jvp`` in both, eagerly and in ``jit``,
    and ``jax.jacfwd`` of each, equal the same sums written in ``jnp`` (small integers, so
    that sums are exact); ``jacfwd`` of ``jacfwd`` across the two, the cross term."""
    table = jnp.arange(12.0).reshape(4, 3)
    ids, offsets = jnp.array([0, 2, 3, 1]), jnp.array([0, 2])
    weights = jnp.array([1.0, 2.0, 0.5, 3.0])

    def ours(w, p):
        return ng.embedding_bag(w, ids, offsets, mode="sum", per_sample_weights=p)

    def theirs(w, p):
        return jax.ops.segment_sum(w[ids] * p[:, None], jnp.array([0, 0, 1, 1]), 2)
    tangents = (jnp.full((4, 3), 0.5), jnp.array([1.0, -1.0, 2.0, 0.25]))
    for wrap in (lambda f: f, jax.jit):
        out, got = wrap(lambda *a: jax.jvp(ours, a[:2], a[2:]))(table, weights, *tangents)
        want_out, want = jax.jvp(theirs, (table, weights), tangents)
        same(out, np.asarray(want_out))
        same(got, np.asarray(want))
    for k in (0, 1):
        same(jax.jacfwd(ours, argnums=k)(table, weights),
             np.asarray(jax.jacfwd(theirs, argnums=k)(table, weights)))
    same(jax.jacfwd(jax.jacfwd(ours, argnums=1))(table, weights),
         np.asarray(jax.jacfwd(jax.jacfwd(theirs, argnums=1))(table, weights)))


def test_forward_mode_of_a_max_min_or_product_is_along_its_sums_routes():
    """Where each element moves at most one of the output's (``_core.op_routed``: a segment
    max, min or product, a scatter's min or max), ``jax.jvp`` and ``jax.jacfwd``, eagerly
    and in ``jit``, equal JAX's own ops bit for bit, a tie of two averaged as JAX's is; a
    product, whose forward mode JAX lacks, equals its reverse mode's Jacobian times the
    tangent. Forward over forward of a max too. A complex product is refused."""
    p = jnp.asarray(P).at[2].set(jnp.asarray(P)[0])  # rows 0 and 2 tie in segment 2
    segments = jnp.asarray([2, 0, 2, 1, -1, 0])      # a negative id: dropped
    tangent = jnp.arange(24.0, dtype=jnp.float32).reshape(6, 4) - 7.0
    where = np.array([[5], [1], [5]])
    cases = [
        (lambda x: ng.unsorted_segment_max(x, segments, 3),
         lambda x: jax.ops.segment_max(x, segments, 3)),
        (lambda x: ng.unsorted_segment_min(x, segments, 3),
         lambda x: jax.ops.segment_min(x, segments, 3)),
        (lambda x: ng.tensor_scatter_nd_max(x, where, x[:3] + 4.0),
         lambda x: x.at[where[:, 0]].max(x[:3] + 4.0)),
        (lambda x: ng.tensor_scatter_nd_min(x, where, x[3:] - 1.5),
         lambda x: x.at[where[:, 0]].min(x[3:] - 1.5)),
    ]
    _forward_mode_equals(cases, p, tangent)
    # Forward over forward: a max's factors are constant, its second derivative JAX's zero.
    ours, theirs = cases[0]
    same(jax.jacfwd(jax.jacfwd(ours))(p), np.asarray(jax.jacfwd(jax.jacfwd(theirs))(p)))
    prod = lambda x: ng.unsorted_segment_prod(x, segments, 3)  # noqa: E731
    _, got = jax.jit(lambda x, t: jax.jvp(prod, (x,), (t,)))(p, tangent)
    want = jnp.einsum("abij,ij->ab", jax.jacrev(prod)(p), tangent)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="not implemented for complex data"):
        jax.jvp(prod, (p.astype(jnp.complex64),), (tangent.astype(jnp.complex64),))


def test_second_derivatives_equal_jaxs_own_where_the_op_is_linear():
    """``jax.hessian`` (forward over reverse) and ``grad`` of ``grad`` (reverse over
    reverse) through the gradient's own primitive: its JVP is itself on the upstream's
    tangent, its transpose the op's tangent; a max's or a min's (constant factors), the
    routed tangent, a tie included. A product has none, and says so."""
    p = jnp.asarray(P, dtype=jnp.float32)
    segments = jnp.asarray([2, 0, 2, 1, 1, 0])
    cases = [
        (lambda x: ng.gather(x, IDS), lambda x: jnp.take(x, IDS, axis=0)),
        (lambda x: ng.gather(x, np.array([[3, 0]] * 6), axis=1, batch_dims=1),
         lambda x: jnp.take_along_axis(x, np.array([[3, 0]] * 6), axis=1)),
        (lambda x: ng.unsorted_segment_mean(x, segments, 3),
         lambda x: jax.ops.segment_sum(x, segments, 3)
         / jnp.maximum(jax.ops.segment_sum(jnp.ones(6), segments, 3), 1)[:, None]),
        (lambda x: ng.unsorted_segment_max(x.at[2].set(x[0]), segments, 3),
         lambda x: jax.ops.segment_max(x.at[2].set(x[0]), segments, 3)),
        (lambda x: ng.tensor_scatter_nd_min(x, np.array([[1], [1]]), x[3:5] - 4.0),
         lambda x: x.at[np.array([1, 1])].min(x[3:5] - 4.0)),
    ]
    for ours, theirs in cases:
        def loss(f):
            return lambda x: (jnp.sin(f(x)) * f(x)).sum()
        same(jax.jit(jax.hessian(loss(ours)))(p),
             np.asarray(jax.hessian(loss(theirs))(p)))
        twice = [jax.grad(lambda x: jax.grad(loss(f))(x).sum()) for f in (ours, theirs)]
        np.testing.assert_allclose(twice[0](p), twice[1](p), rtol=1e-6, atol=1e-6)
    def prod_loss(x):
        return (ng.unsorted_segment_prod(x, segments, 3) ** 2).sum()
    with pytest.raises(NotImplementedError, match="unsorted_segment_prod: .*not linear"):
        jax.hessian(prod_loss)(p)
    with pytest.raises(NotImplementedError, match="unsorted_segment_prod: .*not linear"):
        jax.grad(lambda x: jax.grad(prod_loss)(x).sum())(p)


def test_vmap_of_an_empty_batch_has_its_elements_shape():
    """An empty batch, mapped once per element (``lax.map`` of no elements), has the shape
    of the primitive's result, for the op and for its gradient."""
    segments = jnp.asarray([2, 0, 2, 1, 1, 0])
    none = jnp.zeros((0, 6, 4))
    assert jax.vmap(lambda d: ng.unsorted_segment_sum(d, segments, 3))(none).shape == (0, 3, 4)
    per_sample = jax.vmap(jax.grad(lambda d: (ng.unsorted_segment_sum(d, segments, 3) ** 2)
                                   .sum()))(none)
    assert per_sample.shape == (0, 6, 4)


def test_derivatives_where_the_upstream_gradient_is_constant():
    """A loss linear in the op's output: the upstream gradient does not depend on x, so the
    gradient's tangent, and the tangent's tangent, are symbolic zeros. The Hessian, forward
    over forward and reverse over forward equal JAX's own."""
    p = jnp.asarray(P)
    w = jnp.arange(4.0, dtype=jnp.float32)
    t = jnp.ones_like(p)
    for ours, theirs in [(lambda x: ng.gather(x, IDS), lambda x: jnp.take(x, IDS, axis=0)),
                         (lambda x: ng.unsorted_segment_sum(x, jnp.asarray([2, 0, 2, 1, 1, 0]),
                                                            3),
                          lambda x: jax.ops.segment_sum(x, jnp.asarray([2, 0, 2, 1, 1, 0]),
                                                        3))]:
        for f in (ours, theirs):
            f.hessian = jax.hessian(lambda x: (f(x) @ w).sum() + (x ** 3).sum())(p)
            f.twice = jax.jvp(lambda y: jax.jvp(f, (y,), (t,))[1], (p,), (t,))[1]
            f.back = jax.grad(lambda y: (jax.jvp(f, (y,), (t,))[1] * f(y)).sum())(p)
            f.plain = jax.hessian(lambda x: f(x).sum())(p)
        for what in ("hessian", "twice", "back", "plain"):
            same(getattr(ours, what), np.asarray(getattr(theirs, what)))


def test_an_updates_second_derivative_is_refused():
    """TensorFlow's gradient of a scatter update gives each repeated index the slice's
    gradient where the result keeps one write: not the tangent's transpose, so no second
    derivative is built from it (it would be wrong, and not symmetric); forward mode, the
    derivative of the result, is JAX's own ``.at[].set``'s."""
    idx = np.array([[1], [3], [1]])
    updates = jnp.asarray([10.0, 20.0, 30.0])
    base = jnp.arange(5.0)
    same(jax.jacfwd(lambda u: ng.tensor_scatter_nd_update(base, idx, u))(updates),
         np.asarray(jax.jacfwd(lambda u: base.at[idx[:, 0]].set(u))(updates)))
    with pytest.raises(NotImplementedError, match="not its tangent's transpose"):
        jax.hessian(lambda u: (ng.tensor_scatter_nd_update(base, idx, u) ** 3).sum())(updates)


def test_linear_transpose_equals_jaxs_own_where_the_op_is_linear():
    """``jax.linear_transpose`` of the op itself: its gradient, in the inputs it is linear
    in (a fill of zero adds nothing), against JAX's own ops; a max, a fill of a nonzero
    value (a constant) and an update are refused, never transposed wrong."""
    p, ids, ct = jnp.asarray(P), jnp.asarray(IDS), jnp.arange(16.0).reshape(4, 4)
    transposed = jax.linear_transpose(lambda t: ng.gather(t, ids), p)
    same(jax.jit(transposed)(ct)[0],
         np.asarray(jax.linear_transpose(lambda t: jnp.take(t, ids, axis=0), p)(ct)[0]))
    seg = jnp.asarray([2, 0, 2, 1, 0, 2])
    same(jax.linear_transpose(lambda d: ng.unsorted_segment_sum(d, seg, 3), p)(ct[:3])[0],
         np.asarray(jax.linear_transpose(lambda d: jax.ops.segment_sum(d, seg, 3), p)(
             ct[:3])[0]))
    rows, u = IDS[:, None], jnp.ones((4, 4))
    ours = jax.linear_transpose(lambda t, v: ng.tensor_scatter_nd_add(t, rows, v), p, u)(p)
    theirs = jax.linear_transpose(lambda t, v: t.at[IDS].add(v), p, u)(p)
    for a, b in zip(ours, theirs):
        same(a, np.asarray(b))
    bad = jnp.asarray([0, 9])
    same(jax.linear_transpose(lambda t: ng.gather(t, bad, bad_indices="fill", fill_value=0.0),
                              p)(ct[:2])[0],
         np.asarray(jax.linear_transpose(lambda t: jnp.take(t, bad, axis=0, mode="fill",
                                                            fill_value=0.0), p)(ct[:2])[0]))
    with pytest.raises(NotImplementedError, match="transpose is not implemented in params: "
                                                  ".* not integers"):
        jax.linear_transpose(lambda t: ng.gather(t, ids), p.astype(jnp.int32))(
            ct.astype(jnp.int32))
    for f, where in [(lambda d: ng.unsorted_segment_max(d, seg, 3), "in data"),
                     (lambda t: ng.gather(t, bad, bad_indices="fill", fill_value=1.0),
                      "in params"),
                     (lambda t: ng.tensor_scatter_nd_update(t, rows, u), "in tensor")]:
        with pytest.raises(NotImplementedError, match=f"transpose is not implemented {where}"):
            jax.linear_transpose(f, p)(jnp.ones(jax.eval_shape(f, p).shape))
