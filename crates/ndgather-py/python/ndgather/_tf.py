"""ndgather's ops as native operations of TensorFlow (issue 55).

A TensorFlow tensor inside ``tf.function`` or a TF1 graph has no memory to read, and an
eager one under ``tf.GradientTape`` needs TensorFlow's own op for its gradient. For those,
the public functions (``ndgather.gather`` and the others) call :func:`run`, which adds the
op ``NdgatherOp`` to TensorFlow's program (any other eager tensor is read in place through
DLPack, as before): a custom op library, compiled from
``_tf_op.cc`` on first use against the installed TensorFlow (``tf.sysconfig``'s flags),
cached, and loaded with ``tf.load_op_library``. Its kernel hands TensorFlow's tensors to the
Rust core through the extension's C ABI (``tf_kernel.rs``), which runs any op of the
registry by name.

- The static shape is the op's own inference (``_core.infer_op``) on the inputs' static
  shapes; the kernel computes the exact one when it runs.
- Gradients are registered with ``tf.RegisterGradient``: the core's gradient of the op
  (``NdgatherGrad``), or ``tf.IndexedSlices`` where TensorFlow gives them (a gather along
  axis 0 with no batch dimensions and the ``"error"`` policy; an embedding lookup of one table
  with no ``max_norm``).
- Where the op is linear (``_core.op_linear``), ``NdgatherGrad`` has a gradient and
  ``NdgatherOp`` a forward derivative, both the op run on tangents: second derivatives and
  ``tf.autodiff.ForwardAccumulator``. Where it is routed (``_core.op_routed``: a max, a
  min, a product), ``NdgatherOp`` has a forward derivative too.
- An index policy is the op's attribute, so ``bad_indices="clamp"`` runs on TensorFlow's
  CPU, and ``"error"`` raises ``tf.errors.InvalidArgumentError`` with TensorFlow's message.

TensorFlow is imported only by a caller that has it: this module imports it on first use.
Building needs a C++ compiler (``$CXX``, else ``c++``, ``g++`` or ``clang++``).
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from typing import Any, Optional, Sequence

import numpy as np

from . import _core, _native_build, _ragged, _staged_call
from ._staged_call import shards  # noqa: F401 (the staging modules offer it)

_lock = threading.Lock()
_library: Any = None


def wanted(*values: Any) -> bool:
    """Whether TensorFlow's own op must take ``values``: a TensorFlow tensor or variable among
    them (or their lists) inside a graph or ``tf.function`` (no memory to read), or while a
    gradient tape may record it. A ragged operand is not (the ragged path takes it)."""
    tf = sys.modules.get("tensorflow")
    if tf is None or not _staged_call.any_of(values, (tf.Tensor, tf.Variable)):
        return False
    if any(_ragged.is_ragged(v) for v in values):
        return False
    return not tf.executing_eagerly() or _recording()


def _recording() -> bool:
    """Whether a gradient tape may record an op now (TensorFlow's own question, asked of its
    eager module: no public one exists); True where it cannot be asked."""
    try:
        from tensorflow.python.eager import record
    except ImportError:
        return True
    return bool(record.could_possibly_record())


def asarray(x: Any) -> Any:
    """``x`` as a TensorFlow tensor (a list or NumPy array beside one)."""
    import tensorflow as tf
    return x if isinstance(x, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(x)


def dtype(x: Any) -> np.dtype:
    """The NumPy dtype of a tensor's elements (for a fill value made in them)."""
    return np.dtype(asarray(x).dtype.as_numpy_dtype)


def fill(bad_indices: str, fill_value: Any, x: Any) -> Optional[bytes]:
    """A fill element's bytes in ``x``'s dtype (``_staged_call.fill_bytes``)."""
    return _staged_call.fill_bytes(bad_indices, fill_value, dtype(x))


def astype(x: Any, name: str) -> Any:
    """``x`` as a tensor of the dtype named ``name``."""
    import tensorflow as tf
    return tf.cast(asarray(x), name)


def flat(x: Any) -> Any:
    """``x`` flattened, row-major."""
    import tensorflow as tf
    return tf.reshape(x, [-1])


def no_out(name: str, out: Any) -> None:
    """Refuses ``out``: a TensorFlow op makes its result."""
    if out is not None:
        raise TypeError(f"{name}: out is not taken for TensorFlow tensors (the op makes its "
                        "result); use the result")


def build() -> str:
    """The path of the op library for the installed TensorFlow and this extension: built on
    first use, then taken from the cache (the key covers the source, the extension, the
    compiler and TensorFlow's version and flags)."""
    try:
        import tensorflow as tf
    except ImportError as e:
        raise ImportError("ndgather: its TensorFlow op needs TensorFlow "
                          "(pip install tensorflow)") from e
    _core.tf_kernels()  # this build of the extension has the kernels' C ABI
    flags = [*tf.sysconfig.get_compile_flags(), *tf.sysconfig.get_link_flags()]
    return _native_build.build("TensorFlow op", "_tf_op.cc", "tf", tf.__version__, flags)


def library() -> Any:
    """The loaded op library, built and its gradients registered once per process."""
    global _library
    with _lock:
        if _library is None:
            import tensorflow as tf
            fd = _native_build.opened(build())
            try:
                lib = tf.load_op_library(f"/proc/self/fd/{fd}")
            finally:
                os.close(fd)
            tf.RegisterGradient("NdgatherOp")(_gradient)
            tf.RegisterGradient("NdgatherGrad")(_gradient_of_gradient)
            _register_jvp()
            from . import _tf_pfor
            _tf_pfor.register()
            _library = lib
    return _library


def _static_shape(t: Any) -> Optional[list]:
    shape = t.shape
    return None if shape.rank is None else [d for d in shape.as_list()]


def run(name: str, inputs: Sequence[Any], attrs: Optional[dict] = None, *,
        sparse_grad: bool = False) -> Any:
    """Runs the registered op ``name`` as TensorFlow's op: ``inputs`` in the order of the op's
    signature (``None`` for one left out, :func:`shards` for a list input such as an
    embedding table's shards), ``attrs`` its attributes (``None`` values take the op's defaults).
    ``sparse_grad`` (PyTorch's ``sparse=True``) changes nothing: the gradients are
    TensorFlow's own kind."""
    import tensorflow as tf
    lib = library()
    groups = _staged_call.groups(inputs)
    arity = [len(g) for g in groups]
    given = [asarray(a) for g in groups for a in g]
    attrs = {k: _staged_call.plain(name, k, v) for k, v in (attrs or {}).items() if v is not None}
    facts: list = []
    at = 0
    for n in arity:
        facts.append(None if n == 0 else (given[at].dtype.name, _static_shape(given[at])))
        at += n
    out_dtype, out_shape = _core.infer_op(name, facts, attrs)
    out_dtype = tf.as_dtype(out_dtype) if out_dtype is not None else given[0].dtype
    return lib.ndgather_op(
        args=given, Tout=out_dtype, op=name, arity=arity,
        attr_names=list(attrs), attr_values=[_staged_call.text(name, k, v) for k, v in attrs.items()],
        **_shape_attrs(out_shape))


def _shape_attrs(shape: Any) -> dict:
    """A static shape (a list with ``None`` for an unknown size, ``None`` for an unknown
    rank, or a ``tf.TensorShape``) as ``NdgatherOp``'s ``out_dims`` and ``out_rank``."""
    import tensorflow as tf
    shape = tf.TensorShape(shape)
    if shape.rank is None:
        return {"out_dims": [], "out_rank": -1}
    return {"out_dims": [-1 if d is None else d for d in shape.as_list()],
            "out_rank": shape.rank}


def _gather_slices(op: Any, name: str, attrs: dict, upstream: Any) -> Optional[Any]:
    """TensorFlow's own gradient where it gives ``IndexedSlices`` of the rows read:
    ``tf.gather``'s along axis 0, with no batch dimensions and bad indices as errors (so
    every index is a row), and ``tf.nn.embedding_lookup``'s of one table with no
    ``max_norm``."""
    import tensorflow as tf
    if name == "embedding_lookup":
        if list(op.get_attr("arity"))[:1] != [1] or "max_norm" in attrs:
            return None
    elif name != "gather" or attrs.get("batch_dims", "0") != "0" \
            or attrs.get("axis", "0") != "0" or attrs.get("bad_indices", "error") != "error":
        return None
    params, indices = op.inputs[0], op.inputs[1]
    params_shape = tf.shape(params)
    size = tf.expand_dims(tf.size(indices), 0)
    values = tf.reshape(upstream, tf.concat([size, params_shape[1:]], 0))
    rows = tf.reshape(indices, size)
    if rows.dtype not in (tf.int32, tf.int64):
        # ndgather takes ids of any integer type; TensorFlow's optimizers and its densifying
        # sum take int32 and int64 only.
        rows = tf.cast(rows, tf.int64)
    return tf.IndexedSlices(values, rows, params_shape)


def _gradient(op: Any, upstream: Any) -> list:
    """``NdgatherOp``'s gradient: one per input, ``None`` for those without one (indices)."""
    import tensorflow as tf
    name = op.get_attr("op").decode()
    names = [n.decode() for n in op.get_attr("attr_names")]
    values = [v.decode() for v in op.get_attr("attr_values")]
    if not _core.op_has_grad(name):
        raise LookupError(f"No gradient defined for op type NdgatherOp: "
                          f"{_staged_call.no_grad(name)}")
    args = list(op.inputs)
    if isinstance(upstream, tf.IndexedSlices):
        # Made dense as TensorFlow's own gather gradient does, with no warning.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            upstream = tf.convert_to_tensor(upstream)
    slices = _gather_slices(op, name, dict(zip(names, values)), upstream)
    if slices is not None:
        return [slices] + [None] * (len(args) - 1)
    wrt = [k for k, a in enumerate(args) if a.dtype.name in _staged_call.grad_dtypes()]
    if not wrt:
        return [None] * len(args)
    grads = library().ndgather_grad(
        args=[*args, op.outputs[0], upstream],
        Tgrads=[args[k].dtype for k in wrt], op=name, arity=op.get_attr("arity"),
        attr_names=names, attr_values=values, wrt=wrt)
    by_input = dict(zip(wrt, grads))
    return [by_input.get(k) for k in range(len(args))]


def _gradient_of_gradient(op: Any, *cotangents: Any) -> list:
    """``NdgatherGrad``'s gradient, where the op is linear in every input with a gradient
    (the registry's fact, ``_core.op_linear``: a gather in its table, a sum in its data):
    the gradient is then linear in the upstream gradient and reads none of those inputs'
    values, so its own gradient is the op's tangent on the cotangents, and none for the
    rest; a max's or a min's, the routed tangent (:func:`_routed`) on the cotangents.
    TensorFlow's second derivatives (a tape over a tape) and its forward mode
    (``ForwardAccumulator``, which differentiates a gradient) take it. Elsewhere (a
    product, a ``max_norm``) there is none, in TensorFlow's words."""
    import tensorflow as tf
    name = op.get_attr("op").decode()
    names = [n.decode() for n in op.get_attr("attr_names")]
    values = [v.decode() for v in op.get_attr("attr_values")]
    arity = list(op.get_attr("arity"))
    wrt = list(op.get_attr("wrt"))
    *inputs, output, upstream = op.inputs
    linear = _linear(name, names, values)
    owners = _staged_call.owners(arity)
    route = _route(name, names, values)
    if route is not None and route[3]:
        # A max's or min's gradient: linear in the upstream gradient, its factors constant
        # wherever the op is differentiable, so zero in the rest; its transpose the routed
        # tangent. (A ForwardAccumulator around a tf.function takes the tangent so.)
        given: list = [None] * len(inputs)
        for k, c in zip(wrt, cotangents):
            given[k] = None if c is None else tf.convert_to_tensor(c)
        return [None] * (len(op.inputs) - 1) + [
            _routed(name, names, values, arity, inputs, output, given, route)]
    if linear is None or not linear[2] or any(owners[k] not in linear[0] for k in wrt):
        raise LookupError(
            f"No gradient defined for op type NdgatherGrad: {name}: the gradient of "
            f"ndgather's op has a derivative only where the op is linear in every input "
            "with a gradient and the gradient is its tangent's transpose (a gather in its "
            "table, a sum in its data), or where it is a max or a min; not a product, a "
            "max_norm, per_sample_weights, or a scatter update, whose gradient gives each "
            "repeated index the slice's). A ForwardAccumulator around a tf.function asks "
            "for it too (TensorFlow transposes the function's gradient there): put the "
            "accumulator inside the function instead")
    tangents: list = [None] * len(inputs)
    for k, c in zip(wrt, cotangents):
        tangents[k] = None if c is None else tf.convert_to_tensor(c)
    positions, attrs, _ = linear
    args = _staged_call.tangent_inputs(positions, arity, inputs, tangents, tf.zeros_like)
    tangent = library().ndgather_op(
        args=args, Tout=upstream.dtype, op=name, arity=arity, attr_names=list(attrs),
        attr_values=list(attrs.values()), **_shape_attrs(upstream.shape))
    return [None] * (len(op.inputs) - 1) + [tangent]


def _register_jvp() -> None:
    """``NdgatherOp``'s forward derivative, for ``tf.autodiff.ForwardAccumulator``: TensorFlow
    takes one per op type from its ``_SPECIAL_CASES`` (its own ``Identity``'s), else
    differentiates the op's gradient, which cannot differentiate the ``IndexedSlices`` of a
    gather's. (Where TensorFlow lacks the table, that default stays.)"""
    try:
        from tensorflow.python.eager import forwardprop
    except ImportError:
        return
    cases = getattr(forwardprop, "_SPECIAL_CASES", None)
    if isinstance(cases, dict):
        cases["NdgatherOp"] = _jvp


def _jvp(attr_tuple: tuple, inputs: Sequence[Any], outputs: Sequence[Any],
         tangents: Sequence[Any]) -> list:
    """The output's tangent: the op, with its tangent attributes, on the tangents of the
    inputs it is linear in, the others as they are; where the op is routed (a max, a min,
    a product), :func:`_routed`'s. TensorFlow gives every input a tangent (zeros where none
    was watched), so the op must be linear or routed in each float input; else there is
    none, as for an op without a gradient."""
    import tensorflow as tf
    attrs = dict(zip(attr_tuple[::2], attr_tuple[1::2]))

    def text(v: Any) -> str:
        return v.decode() if isinstance(v, bytes) else str(v)
    name = text(attrs["op"])
    names = [text(n) for n in attrs["attr_names"]]
    values = [text(v) for v in attrs["attr_values"]]
    arity = [int(n) for n in attrs["arity"]]
    linear = _linear(name, names, values)
    # (Every float input's tangent counts, zeros included: TensorFlow's are all given.)
    given = [t if x.dtype.is_floating or x.dtype.is_complex else None
             for x, t in zip(inputs, tangents)]
    route = _route(name, names, values)
    if route is not None:
        return [_routed(name, names, values, arity, inputs, outputs[0], given, route)]
    groups = _multilinear(name, names, values)
    try:
        if groups:
            # By the product rule: the op's tangent on each group's tangents, summed.
            terms = _staged_call.multilinear_terms(groups, arity, inputs, given, tf.zeros_like)
            return [tf.add_n([library().ndgather_op(
                args=args, Tout=outputs[0].dtype, op=name, arity=arity,
                attr_names=list(attrs), attr_values=list(attrs.values()),
                **_shape_attrs(outputs[0].shape)) for attrs, args in terms])]
        if linear is None:
            raise _staged_call.NotLinear(0)
        positions, tangent_attrs, _ = linear
        args = _staged_call.tangent_inputs(positions, arity, inputs, given, tf.zeros_like)
    except _staged_call.NotLinear:
        raise LookupError(
            f"No gradient defined for op type NdgatherOp: {name}: ndgather's forward mode "
            "needs the op linear in every float input (a gather in its table, a sum in its "
            "data), or each element moving at most one of the output's (a max, a min, a "
            "product), or linear in groups apart (a bag's table and weights); not a "
            "max_norm") from None
    return [library().ndgather_op(
        args=args, Tout=outputs[0].dtype, op=name, arity=arity,
        attr_names=list(tangent_attrs), attr_values=list(tangent_attrs.values()),
        **_shape_attrs(outputs[0].shape))]


def _routed(name: str, names: list, values: list, arity: list, inputs: Sequence[Any],
            output: Any, tangents: list, route: tuple) -> Any:
    """A routed op's tangent: the linear op along its routes, on each tangent times the
    op's gradient for an upstream of ones (zero where that is zero, whatever the tangent).
    A max's and a min's factors are constant, their derivative zero (``stop_gradient``, so
    that TensorFlow's backward of a function that holds them, which a ``ForwardAccumulator``
    around a ``tf.function`` builds, has none to ask for); a derivative of a product's is
    refused by the gradient's (``NdgatherGrad``'s)."""
    import tensorflow as tf
    op, attrs, positions, constant = route
    wrt = [k for k, a in enumerate(inputs) if a.dtype.name in _staged_call.grad_dtypes()]
    factors = dict(zip(wrt, library().ndgather_grad(
        args=[*inputs, output, tf.ones_like(output)], Tgrads=[inputs[k].dtype for k in wrt],
        op=name, arity=arity, attr_names=names, attr_values=values, wrt=wrt)))
    if constant:
        factors = {k: tf.stop_gradient(f) for k, f in factors.items()}
    try:
        args = _staged_call.routed_inputs(
            positions, arity, inputs, tangents, [factors.get(j) for j in range(len(inputs))],
            tf.zeros_like, lambda m, t: tf.where(m == 0, tf.zeros_like(t), m * t),
            lambda x: x.dtype.is_complex)
    except _staged_call.Complex as e:
        raise LookupError(
            f"No gradient defined for op type NdgatherOp: {name}: ndgather's forward mode of "
            f"a max, a min or a product is for real inputs, not complex "
            f"{_staged_call.input_name(name, e.position)}") from None
    return library().ndgather_op(
        args=args, Tout=output.dtype, op=op, arity=arity, attr_names=list(attrs),
        attr_values=list(attrs.values()), **_shape_attrs(output.shape))


def _route(name: str, names: list, values: list) -> Optional[tuple]:
    """Where the op with these attributes is routed (``_core.op_routed``: a max, a min, a
    product): the linear op, its attributes by name, as text, and the positions of the
    inputs whose tangents it takes."""
    fact = _core.op_routed(name, _core.text_attrs(name, names, values))
    if fact is None:
        return None
    op, over, positions, constant = fact
    return (op, _staged_call.texts_over(name, names, values, over), frozenset(positions),
            constant)


def _multilinear(name: str, names: list, values: list) -> list:
    """Where the op is linear in groups of inputs apart (``_core.op_multilinear``: a
    weighted bag's table and weights): each group's positions and its tangent's attributes
    by name, as text; none where it is not."""
    groups = _core.op_multilinear(name, _core.text_attrs(name, names, values))
    return [(frozenset(p), _staged_call.texts_over(name, names, values, over))
            for p, over in groups]


def _linear(name: str, names: list, values: list) -> Optional[tuple]:
    """Where the op with these attributes is linear (``_core.op_linear``): the positions of
    those inputs, its tangent's attributes by name, as text, and whether its gradient is
    the tangent's transpose."""
    fact = _core.op_linear(name, _core.text_attrs(name, names, values))
    if fact is None:
        return None
    positions, tangent_attrs, adjoint = fact
    attrs = _staged_call.texts_over(name, names, values, tangent_attrs)
    return frozenset(positions), attrs, adjoint
