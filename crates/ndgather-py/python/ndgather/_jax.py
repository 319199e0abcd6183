"""ndgather's ops as native operations of JAX (issue 55).

Inside ``jax.jit``, ``jax.grad`` and ``jax.vmap`` an array is a tracer, with no memory to
read. There the public functions (``ndgather.gather`` and the others) call :func:`run`,
which stages the op as an XLA custom call into the Rust core: the targets ``ndgather`` and
``ndgather_grad``, two handlers of XLA's FFI that the extension exports (``xla.rs``) and
that run any op of the registry by name. XLA compiles the call into its program, so a
compiled function never returns to Python for it.

- The result's shape and dtype are the op's own inference (``_core.infer_op``).
- Gradients go through ``jax.custom_vjp``: the backward pass is the core's gradient of the
  op, through ``ndgather_grad``; integer inputs (indices) have none.
- ``jax.vmap`` of ``gather``, ``gather_nd`` and ``take_along_axis`` is one call with one more
  batch dimension (a batching rule, ``jax.custom_batching.custom_vmap``); the other ops map
  the call over the batch, one call per element (``vmap_method`` ``"sequential"``).
- An index policy is the op's attribute, so ``bad_indices="error"`` raises inside
  ``jax.jit`` too: JAX's ``JaxRuntimeError``, with TensorFlow's message.

JAX is imported only by a caller that has it: this module is imported on first use.
"""

from __future__ import annotations

import functools
import operator
import sys
from typing import Any, Optional, Sequence

import numpy as np

from . import _batching, _core, _staged_call
from ._staged_call import shards  # noqa: F401 (the staging modules offer it)

_registered = False


def traced(*values: Any) -> bool:
    """Whether any of ``values`` (or of the lists among them) is a JAX tracer: an array
    inside a JAX transformation, which only a custom call can read."""
    jax = sys.modules.get("jax")
    if jax is None:
        return False
    return _staged_call.any_of(values, jax.core.Tracer)


def asarray(x: Any) -> Any:
    """``x`` as a JAX array or tracer (a list or NumPy array beside a tracer)."""
    import jax.numpy as jnp
    return jnp.asarray(x)


def dtype(x: Any) -> np.dtype:
    """The NumPy dtype of an array's elements (for a fill value made in them)."""
    return np.dtype(asarray(x).dtype)


def fill(bad_indices: str, fill_value: Any, x: Any) -> Optional[bytes]:
    """A fill element's bytes in ``x``'s dtype (``_staged_call.fill_bytes``)."""
    return _staged_call.fill_bytes(bad_indices, fill_value, dtype(x))


def astype(x: Any, name: str) -> Any:
    """``x`` as an array of the dtype named ``name``, which JAX must hold as it is (64-bit
    types only with ``jax_enable_x64``: a narrower one could wrap the values)."""
    import jax
    if jax.dtypes.canonicalize_dtype(name) != np.dtype(name):
        raise TypeError(f"the values are read as {name} here, which JAX holds only with "
                        "jax_enable_x64 set; give them one integer type")
    return asarray(x).astype(name)


def flat(x: Any) -> Any:
    """``x`` flattened, row-major."""
    return x.reshape(-1)


def no_out(name: str, out: Any) -> None:
    """Refuses ``out`` inside a transformation: JAX's arrays are immutable."""
    if out is not None:
        raise TypeError(f"{name}: out is not taken inside a JAX transformation (JAX arrays are "
                        "immutable); use the result")


def _register() -> None:
    """Registers the two handlers with XLA, once per process."""
    global _registered
    if _registered:
        return
    import jax
    for name, address in (("ndgather", _core.xla_handler()),
                          ("ndgather_grad", _core.xla_grad_handler())):
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(address), platform="cpu")
    _registered = True


def _attr(value: Any) -> Any:
    """An attribute as XLA's FFI takes it: int64, float64 and bool scalars, strings, and
    arrays of int64 (a shape) or of bytes (a fill element)."""
    if isinstance(value, (bool, np.bool_)):
        return np.bool_(value)
    if isinstance(value, (int, np.integer)):
        return np.int64(value)
    if isinstance(value, (float, np.floating)):
        return np.float64(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return np.frombuffer(bytes(value), np.uint8)
    return np.asarray(value, np.int64)


def _frozen(attrs: dict) -> tuple:
    """The attributes as a hashable key (``custom_vjp``'s static arguments); ``None`` values
    are left out, so that the op takes its defaults."""
    out = []
    for name, value in sorted(attrs.items()):
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = tuple(operator.index(v) for v in value)
        out.append((name, value))
    return tuple(out)


def run(name: str, inputs: Sequence[Any], attrs: Optional[dict] = None, *,
        sparse_grad: bool = False) -> Any:
    """Runs the registered op ``name`` on JAX arrays or tracers, staged as a custom call:
    ``inputs`` in the order of the op's signature (``None`` for one left out, :func:`shards` for a
    list input such as an embedding table's shards), ``attrs`` its attributes. JAX's
    gradients have no sparse layout: ``sparse_grad`` (PyTorch's ``sparse=True``) changes
    nothing."""
    import jax
    import jax.numpy as jnp
    _register()
    groups = _staged_call.groups(inputs)
    arity = tuple(len(g) for g in groups)
    given = [a for g in groups for a in g]
    # Only arrays given as JAX's own are checked: jnp.asarray puts a NumPy array or a list on
    # the default device, which need not be the CPU the program is compiled for.
    _on_cpu(name, [a for a in given if isinstance(a, jax.Array)])
    return _call(name, arity, _frozen(attrs or {}), *[jnp.asarray(a) for a in given])


def _on_cpu(name: str, arrays: Sequence[Any]) -> None:
    """Refuses concrete arrays that live on another device: the ops run on the CPU. (A
    tracer has no device; a program compiled for another backend finds no handler there,
    and XLA says so.)"""
    import jax
    for a in arrays:
        if isinstance(a, jax.core.Tracer) or not hasattr(a, "devices"):
            continue
        platforms = sorted({d.platform for d in a.devices()})
        if platforms != ["cpu"]:
            raise ValueError(
                f"{name}: ndgather's ops run on the CPU, and this array is on {platforms}: "
                "move it first, jax.device_put(x, jax.devices('cpu')[0])")


def _result_type(name: str, arity: tuple, attrs: tuple, flat: Sequence[Any]) -> Any:
    """The op's result as ``jax.ShapeDtypeStruct``, from its inference on the inputs'
    shapes and dtypes."""
    import jax
    import jax.numpy as jnp
    facts: list = []
    at = 0
    for n in arity:
        facts.append(None if n == 0 else (np.dtype(flat[at].dtype).name, list(flat[at].shape)))
        at += n
    dtype, shape = _core.infer_op(name, facts, dict(attrs))
    if shape is None or any(d is None for d in shape):
        raise ValueError(
            f"{name}: inside a JAX transformation the result's shape must follow from the "
            f"inputs' shapes, and {name}'s depends on their values: give the size it needs "
            "(for the segment reductions, the unsorted ones with num_segments)")
    if dtype is None:
        dtype = flat[0].dtype
    return jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype))


def _ffi(target: str, name: str, arity: tuple, attrs: tuple, results: Any,
         operands: Sequence[Any]) -> Any:
    import jax
    call = jax.ffi.ffi_call(target, results, vmap_method="sequential")
    return call(*operands, ndgather_op=name, ndgather_arity=np.asarray(arity, np.int64),
                **{k: _attr(v) for k, v in attrs})


def _forward(name: str, arity: tuple, attrs: tuple, *flat: Any) -> Any:
    if name in _batching.BATCHABLE and arity == (1, 1):
        return _batchable(name, attrs)(*flat)
    return _ffi("ndgather", name, arity, attrs, _result_type(name, arity, attrs, flat), flat)


@functools.lru_cache(maxsize=None)
def _batchable(name: str, attrs: tuple) -> Any:
    """The op on ``(params, indices)`` with its batching rule, ``_batching.plan``'s: under
    ``jax.vmap`` a batched table is one call with ``batch_dims`` (and a given axis) one
    more; batched indices alone from one table are one call whose batch lands at the axis;
    ``take_along_axis`` broadcasts one table; a table that one call needs broadcast is
    broadcast."""
    import jax
    import jax.numpy as jnp

    @jax.custom_batching.custom_vmap
    def op(params: Any, indices: Any) -> Any:
        flat = (params, indices)
        return _ffi("ndgather", name, (1, 1), attrs,
                    _result_type(name, (1, 1), attrs, flat), flat)

    @op.def_vmap
    def rule(axis_size: int, in_batched: Sequence[bool], params: Any, indices: Any) -> tuple:
        params_batched, indices_batched = in_batched
        kind, changes, out_axis = _batching.plan(name, dict(attrs), params_batched,
                                                 params.ndim)
        if kind == "indices":
            return jnp.moveaxis(_batchable(name, attrs)(params, indices), out_axis, 0), True
        if kind == "broadcast":
            params = params[None]
        elif not params_batched:
            params = jnp.broadcast_to(params, (axis_size, *params.shape))
        if not indices_batched:
            indices = jnp.broadcast_to(indices, (axis_size, *indices.shape))
        given = _frozen({**dict(attrs), **changes})
        return _batchable(name, given)(params, indices), True

    return op


def _custom_vjp():
    import jax
    import jax.numpy as jnp

    @functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1, 2))
    def call(name: str, arity: tuple, attrs: tuple, *flat: Any) -> Any:
        return _forward(name, arity, attrs, *flat)

    def fwd(name: str, arity: tuple, attrs: tuple, *primals: Any) -> tuple:
        # With symbolic zeros, each primal says whether it is differentiated (`perturbed`).
        flat = tuple(p.value for p in primals)
        if not _core.op_has_grad(name):
            raise TypeError(_staged_call.no_grad(name))
        with_grad = _staged_call.grad_dtypes()
        for p in primals:
            dtype = jnp.dtype(p.value.dtype)
            if p.perturbed and jnp.issubdtype(dtype, jnp.inexact) and dtype.name not in with_grad:
                raise TypeError(f"{name}: ndgather has no gradient for {dtype.name} inputs "
                                f"(those with one: {', '.join(sorted(with_grad))})")
        out = _forward(name, arity, attrs, *flat)
        return out, (flat, out)

    def bwd(name: str, arity: tuple, attrs: tuple, residuals: tuple, upstream: Any) -> tuple:
        flat, out = residuals
        if isinstance(upstream, jax.custom_derivatives.SymbolicZero):
            return tuple(None for _ in flat)
        # One result per input of a dtype with a gradient in the core, as the handler writes.
        with_grad = _staged_call.grad_dtypes()
        wanted = [k for k, a in enumerate(flat) if jnp.dtype(a.dtype).name in with_grad]
        if not wanted:
            return tuple(None for _ in flat)
        results = [jax.ShapeDtypeStruct(flat[k].shape, flat[k].dtype) for k in wanted]
        grads = _ffi("ndgather_grad", name, arity, attrs, results,
                     [*flat, out, upstream.astype(out.dtype)])
        by_input = dict(zip(wanted, grads))
        return tuple(by_input.get(k) for k in range(len(flat)))

    call.defvjp(fwd, bwd, symbolic_zeros=True)
    return call


@functools.lru_cache(maxsize=None)
def _vjp_call() -> Any:
    return _custom_vjp()


def _call(name: str, arity: tuple, attrs: tuple, *flat: Any) -> Any:
    return _vjp_call()(name, arity, attrs, *flat)
