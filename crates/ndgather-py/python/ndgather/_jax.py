"""ndgather's ops as native operations of JAX (issue 55).

Inside ``jax.jit``, ``jax.grad`` and ``jax.vmap`` an array is a tracer, with no memory to
read. There the public functions (``ndgather.gather`` and the others) call :func:`run`,
which stages the op as an XLA custom call into the Rust core: the targets ``ndgather`` and
``ndgather_grad``, two handlers of XLA's FFI that the extension exports (``xla.rs``) and
that run any op of the registry by name. XLA compiles the call into its program, so a
compiled function never returns to Python for it.

- The result's shape and dtype are the op's own inference (``_core.infer_op``).
- The op is a JAX primitive with a JVP and a transpose rule (see :func:`_primitives`): its
  tangent is a primitive of its own, the Jacobian times the tangents, which reverse mode
  transposes into the core's gradient (``ndgather_grad``; integer inputs, indices, have
  none), and forward mode evaluates as the op on the tangents where the registry says the
  op is linear in them (``_core.op_linear``), or the linear op along its routes where it is
  routed (``_core.op_routed``). Where the op is linear in every input with a
  gradient, the gradient has a JVP and a transpose too: second derivatives.
- ``jax.vmap`` of ``gather``, ``gather_nd`` and ``take_along_axis`` is one call with one more
  batch dimension (``_batching.plan``); the other ops map the call over the batch, one call
  per element (``lax.map``).
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
    """The attributes as a hashable key (the primitives' parameters); ``None`` values are
    left out, so that the op takes its defaults."""
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


def _call(name: str, arity: tuple, attrs: tuple, *flat: Any) -> Any:
    return _primitives()[0].bind(*flat, name=name, arity=arity, attrs=attrs)


def _result(name: str, arity: tuple, attrs: tuple, *flat: Any) -> Any:
    """The op's custom call into the handler ``ndgather``."""
    return _ffi("ndgather", name, arity, attrs, _result_type(name, arity, attrs, flat), flat)


def _wanted(flat: Sequence[Any]) -> list:
    """The inputs whose gradient the gradient handler writes: those of a dtype with one."""
    import jax.numpy as jnp
    with_grad = _staged_call.grad_dtypes()
    return [k for k, a in enumerate(flat) if jnp.dtype(a.dtype).name in with_grad]


def _grad_result(name: str, arity: tuple, attrs: tuple, *args: Any) -> list:
    """The op's gradient's custom call into the handler ``ndgather_grad``: ``args`` the op's
    inputs, its output and the upstream gradient; a result per :func:`_wanted` input."""
    import jax
    flat = args[:-2]
    results = [jax.ShapeDtypeStruct(flat[k].shape, flat[k].dtype) for k in _wanted(flat)]
    return list(_ffi("ndgather_grad", name, arity, attrs, results, args)) if results else []


@functools.lru_cache(maxsize=None)
def _linear(name: str, attrs: tuple) -> tuple:
    """Where the op with ``attrs`` is linear (the registry's fact, ``_core.op_linear``): the
    positions of those inputs (none where it is not), its tangent's attributes, and whether
    its gradient is the tangent's transpose."""
    fact = _core.op_linear(name, {k: _plain(v) for k, v in attrs})
    if fact is None:
        return frozenset(), attrs, False
    positions, tangent_attrs, adjoint = fact
    return frozenset(positions), _frozen({**dict(attrs), **tangent_attrs}), adjoint


def _constant(attrs: tuple, tangent_attrs: tuple) -> bool:
    """Whether the op adds a constant that its tangent's op leaves out: an attribute that
    differs there (a fill's value) and is not zero (its bytes all zeros, or the number 0)."""
    given = dict(attrs)

    def zero(v: Any) -> bool:
        if isinstance(v, bytes):
            return not any(v)
        return isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0
    return any(given.get(k) != v and not zero(given.get(k)) for k, v in tangent_attrs)


def _plain(value: Any) -> Any:
    """An attribute as ``_frozen`` holds it, as the core's binding takes it."""
    return list(value) if isinstance(value, tuple) else value


def _not_linear(name: str, position: int, what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{name}: {what} is not implemented where a tangent reaches "
        f"{_staged_call.input_name(name, position)}: "
        f"{_staged_call.NOT_LINEAR if 'second' in what else _staged_call.NOT_ROUTED}, and "
        "ndgather differentiates it there in reverse mode only (jax.grad, jax.vjp, "
        "jax.jacrev)")


def _tangent(name: str, arity: tuple, attrs: tuple, flat: Sequence[Any],
             tangents: dict, what: str = "forward mode (jvp)") -> Any:
    """The op's tangent: the op, with its tangent attributes, on ``tangents`` (by flat
    position) for the inputs it is linear in (zeros for one without), the others as they
    are; refused where a tangent reaches an input it is not linear in."""
    import jax.numpy as jnp
    positions, tangent_attrs, _ = _linear(name, attrs)
    groups = _multilinear(name, attrs)
    try:
        if groups and what == "forward mode (jvp)":
            # By the product rule: the op's tangent on each group's tangents, summed.
            terms = _staged_call.multilinear_terms(
                groups, arity, flat, [tangents.get(j) for j in range(len(flat))],
                jnp.zeros_like)
            return functools.reduce(operator.add, [
                _call(name, arity, group_attrs, *given) for group_attrs, given in terms])
        given = _staged_call.tangent_inputs(
            positions, arity, flat, [tangents.get(j) for j in range(len(flat))],
            jnp.zeros_like)
    except _staged_call.NotLinear as e:
        raise _not_linear(name, e.position, what) from None
    return _call(name, arity, tangent_attrs, *given)


@functools.lru_cache(maxsize=None)
def _route(name: str, attrs: tuple) -> Optional[tuple]:
    """Where the op with ``attrs`` is routed (the registry's fact, ``_core.op_routed``: a
    max, a min, a product): the linear op, its attributes, and the positions of the inputs
    whose tangents it takes."""
    fact = _core.op_routed(name, {k: _plain(v) for k, v in attrs})
    if fact is None:
        return None
    op, over, positions, constant = fact
    return op, _frozen({**dict(attrs), **over}), frozenset(positions), constant


@functools.lru_cache(maxsize=None)
def _multilinear(name: str, attrs: tuple) -> tuple:
    """Where the op with ``attrs`` is linear in groups of inputs apart (the registry's fact,
    ``_core.op_multilinear``: a weighted bag's table and weights): each group's positions
    and its tangent's attributes; none where it is not."""
    groups = _core.op_multilinear(name, {k: _plain(v) for k, v in attrs})
    return tuple((frozenset(p), _frozen({**dict(attrs), **over})) for p, over in groups)


def _routed(grad_p: Any, name: str, arity: tuple, attrs: tuple, flat: Sequence[Any],
            output: Any, tangents: dict) -> Any:
    """A routed op's tangent: the linear op along its routes, on each tangent times the
    op's gradient for an upstream of ones (zero where that is zero, whatever the tangent)."""
    import jax.numpy as jnp
    op, route_attrs, positions, _ = _route(name, attrs)
    factors = dict(zip(_wanted(flat), grad_p.bind(
        *flat, output, jnp.ones_like(output), name=name, arity=arity, attrs=attrs)))
    try:
        given = _staged_call.routed_inputs(
            positions, arity, flat, [tangents.get(j) for j in range(len(flat))],
            [factors.get(j) for j in range(len(flat))], jnp.zeros_like,
            lambda m, t: jnp.where(m == 0, jnp.zeros_like(t), m * t),
            lambda x: jnp.issubdtype(x.dtype, jnp.complexfloating))
    except _staged_call.NotLinear as e:
        raise _not_linear(name, e.position, "forward mode (jvp)") from None
    except _staged_call.Complex as e:
        raise NotImplementedError(
            f"{name}: forward mode (jvp) is not implemented for complex "
            f"{_staged_call.input_name(name, e.position)}: ndgather computes a max's, a "
            "min's or a product's forward derivative for real inputs; use reverse mode "
            "(jax.grad, jax.vjp, jax.jacrev)") from None
    return _call(op, arity, route_attrs, *given)


def _check_grad_dtypes(name: str, flat: Sequence[Any], perturbed: Sequence[int]) -> None:
    """Refuses a tangent on a float input of a dtype without a gradient in the core."""
    import jax.numpy as jnp
    with_grad = _staged_call.grad_dtypes()
    for k in perturbed:
        dtype = jnp.dtype(flat[k].dtype)
        if jnp.issubdtype(dtype, jnp.inexact) and dtype.name not in with_grad:
            raise TypeError(f"{name}: ndgather has no gradient for {dtype.name} inputs "
                            f"(those with one: {', '.join(sorted(with_grad))})")


def _is_zero(t: Any) -> bool:
    from jax.interpreters import ad
    return type(t) is ad.Zero


def _zero(x: Any) -> Any:
    """A symbolic zero tangent of ``x``'s type."""
    import jax
    from jax.interpreters import ad
    return ad.Zero(jax.typeof(x).to_tangent_aval())


def _mapped(primitive: Any, args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
    """A primitive under ``jax.vmap`` with no rule of its own: once per element of the batch
    (``lax.map``, a loop XLA runs), each call a primitive that the other transformations
    still see."""
    import jax
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    batched = [k for k, d in enumerate(dims) if d is not None]
    moved = [jax.numpy.moveaxis(args[k], dims[k], 0) for k in batched]

    def element(xs: Sequence[Any]) -> Any:
        given = list(args)
        for k, x in zip(batched, xs):
            given[k] = x
        return primitive.bind(*given, **params)
    out = jax.lax.map(element, moved) if size else _empty(primitive, args, dims, params)
    return out, ([0] * len(out) if primitive.multiple_results else 0)


def _empty(primitive: Any, args: Sequence[Any], dims: Sequence[Any], params: dict) -> Any:
    """An empty batch's result: the primitive's shapes, with none of the batch."""
    import jax
    import jax.numpy as jnp
    element = [jax.ShapeDtypeStruct(a.shape[:d] + a.shape[d + 1:] if d is not None
                                    else a.shape, a.dtype) for a, d in zip(args, dims)]
    shapes = jax.eval_shape(lambda *xs: primitive.bind(*xs, **params), *element)
    if primitive.multiple_results:
        return [jnp.zeros((0, *s.shape), s.dtype) for s in shapes]
    return jnp.zeros((0, *shapes.shape), shapes.dtype)


@functools.lru_cache(maxsize=None)
def _primitives() -> tuple:
    """The op, its linearisation and its gradient as JAX primitives, each lowered to the
    custom calls (``lower_fun`` of the FFI call):

    - ``ndgather_op``: the op. Its JVP is the op itself and ``ndgather_lin`` on the tangents;
      its batching rule ``_batching.plan``'s for the gathers, else once per element; its
      transpose (``jax.linear_transpose``), where it is linear, its gradient.
    - ``ndgather_lin``: the op's Jacobian times the tangents, the primal inputs held (no
      copy of a table). Transposed (reverse mode), it is the gradient, ``ndgather_grad``;
      evaluated (forward mode), the op on the tangents where it is linear in them, the
      linear op along its routes on the tangents times its gradient for ones where it is
      routed (``_core.op_routed``: a max, a min, a product), else refused.
    - ``ndgather_grad``: the gradient, a result per input with one. Where the op is linear
      in every such input, it is linear in the upstream gradient and reads none of their
      values: its JVP is itself on the upstream's tangent, and its transpose the op's
      tangent on the cotangents (second derivatives). A max's or a min's is linear in the
      upstream too, with constant factors: its transpose the routed tangent."""
    import jax
    import jax.numpy  # noqa: F401 (the transpose's zeros)
    from jax.extend.core import Primitive
    from jax.interpreters import ad, batching, mlir

    op_p, lin_p, grad_p = Primitive("ndgather_op"), Primitive("ndgather_lin"), \
        Primitive("ndgather_grad")
    grad_p.multiple_results = True

    def shaped(s: Any) -> Any:
        return jax.core.ShapedArray(s.shape, s.dtype)

    # The op.
    op_p.def_impl(lambda *flat, name, arity, attrs: _result(name, arity, attrs, *flat))
    op_p.def_abstract_eval(lambda *flat, name, arity, attrs: shaped(
        _result_type(name, arity, attrs, flat)))
    mlir.register_lowering(op_p, mlir.lower_fun(
        lambda *flat, name, arity, attrs: _result(name, arity, attrs, *flat),
        multiple_results=False), platform="cpu")

    def op_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str, arity: tuple,
               attrs: tuple) -> tuple:
        out = op_p.bind(*primals, name=name, arity=arity, attrs=attrs)
        perturbed = tuple(j for j, t in enumerate(tangents) if not _is_zero(t))
        if not perturbed:
            return out, _zero(out)
        _check_grad_dtypes(name, primals, perturbed)
        tangent = lin_p.bind(*primals, out, *(tangents[j] for j in perturbed), name=name,
                             arity=arity, attrs=attrs, perturbed=perturbed)
        return out, tangent
    ad.primitive_jvps[op_p] = op_jvp

    def op_batch(args: Sequence[Any], dims: Sequence[Any], *, name: str, arity: tuple,
                 attrs: tuple) -> tuple:
        if name in _batching.BATCHABLE and arity == (1, 1):
            return _batched_gather(op_p, args, dims, name, attrs)
        return _mapped(op_p, args, dims, name=name, arity=arity, attrs=attrs)
    batching.primitive_batchers[op_p] = op_batch

    # Its linearisation: the op's inputs, its output, then the tangents of `perturbed`.
    def split(args: Sequence[Any], arity: tuple) -> tuple:
        n = sum(arity)
        return args[:n], args[n], args[n + 1:]

    def lin_value(*args: Any, name: str, arity: tuple, attrs: tuple, perturbed: tuple) -> Any:
        flat, output, tangents = split(args, arity)
        if _route(name, attrs) is not None:
            return _routed(grad_p, name, arity, attrs, flat, output,
                           dict(zip(perturbed, tangents)))
        return _tangent(name, arity, attrs, flat, dict(zip(perturbed, tangents)))
    lin_p.def_impl(lin_value)
    lin_p.def_abstract_eval(lambda *args, arity, **_: shaped(args[sum(arity)]))
    mlir.register_lowering(lin_p, mlir.lower_fun(lin_value, multiple_results=False),
                           platform="cpu")

    def lin_batch(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
        return jax.vmap(functools.partial(lin_value, **params), in_axes=tuple(dims))(
            *args), 0
    batching.primitive_batchers[lin_p] = lin_batch

    def lin_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str, arity: tuple,
                attrs: tuple, perturbed: tuple) -> tuple:
        params = dict(name=name, arity=arity, attrs=attrs, perturbed=perturbed)
        out = lin_p.bind(*primals, **params)
        flat, output, _ = split(primals, arity)
        n = len(flat) + 1
        # Linear in its tangents; in the primal inputs too little is known: refused where
        # a tangent reaches one the op is not jointly linear in with the perturbed ones (a
        # linear op's Jacobian reads none; a weighted bag's, along its weights, reads its
        # table). A max's or min's Jacobian is constant: their tangents add nothing.
        positions = _linear(name, attrs)[0]
        owners = _staged_call.owners(arity)
        route = _route(name, attrs)
        jointly = all(owners[j] in positions for j in perturbed)
        for j, t in enumerate(tangents[:len(flat)]):
            if _is_zero(t) or route is not None and route[3]:
                continue
            if owners[j] not in positions or not jointly:
                raise _not_linear(name, owners[j], "a second derivative")
        dt = tangents[n:]
        if all(_is_zero(t) for t in dt):
            return out, _zero(out)
        given = [ad.instantiate_zeros(t) for t in dt]
        return out, lin_p.bind(*flat, output, *given, **params)
    ad.primitive_jvps[lin_p] = lin_jvp

    def lin_transpose(ct: Any, *args: Any, name: str, arity: tuple, attrs: tuple,
                      perturbed: tuple) -> list:
        flat, output, _ = split(args, arity)
        none = [None] * (len(flat) + 1)
        if _is_zero(ct):
            return none + [None] * len(perturbed)
        if not _core.op_has_grad(name):
            raise TypeError(_staged_call.no_grad(name))
        grads = dict(zip(_wanted(flat), grad_p.bind(*flat, output, ct, name=name, arity=arity,
                                                     attrs=attrs)))
        return none + [grads.get(j) for j in perturbed]
    ad.primitive_transposes[lin_p] = lin_transpose

    def op_transpose(ct: Any, *args: Any, name: str, arity: tuple, attrs: tuple) -> list:
        # `jax.linear_transpose` of the op itself, in the inputs it is given as unknown: its
        # gradient, where the op is linear in them and that is the tangent's transpose (the
        # inputs' values, and the output, it then does not read: zeros, and `ct`).
        unknown = [j for j, a in enumerate(args) if ad.is_undefined_primal(a)]
        positions, tangent_attrs, adjoint = _linear(name, attrs)
        owners = _staged_call.owners(arity)
        for j in unknown:
            if not adjoint or owners[j] not in positions or _constant(attrs, tangent_attrs):
                raise NotImplementedError(
                    f"{name}: its transpose is not implemented in "
                    f"{_staged_call.input_name(name, owners[j])}: the op is not linear there "
                    "(a max, a product, per_sample_weights), a fill writes a constant, or its "
                    "gradient is not its tangent's transpose (a scatter update)")
        flat = [jax.numpy.zeros(a.aval.shape, a.aval.dtype) if ad.is_undefined_primal(a)
                else a for a in args]
        wanted = _wanted(flat)
        for j in unknown:
            if j not in wanted:  # (the core's gradients are of float and complex inputs)
                raise NotImplementedError(
                    f"{name}: its transpose is not implemented in "
                    f"{_staged_call.input_name(name, owners[j])}: the core's gradients are "
                    "of floating and complex inputs, not integers")
        if _is_zero(ct):
            return [None] * len(args)
        grads = dict(zip(wanted, grad_p.bind(*flat, ct, ct, name=name, arity=arity,
                                             attrs=attrs)))
        return [grads.get(j) if j in unknown else None for j in range(len(args))]
    ad.primitive_transposes[op_p] = op_transpose

    # The gradient: the op's inputs, its output, the upstream gradient.
    grad_p.def_impl(lambda *args, name, arity, attrs: _grad_result(name, arity, attrs, *args))
    grad_p.def_abstract_eval(lambda *args, name, arity, attrs: [
        shaped(args[k]) for k in _wanted(args[:-2])])
    mlir.register_lowering(grad_p, mlir.lower_fun(
        lambda *args, name, arity, attrs: _grad_result(name, arity, attrs, *args),
        multiple_results=True), platform="cpu")
    batching.primitive_batchers[grad_p] = functools.partial(_mapped, grad_p)

    def grads_linear(name: str, arity: tuple, attrs: tuple, flat: Sequence[Any]) -> bool:
        # Linear in the upstream gradient, the other inputs' derivatives zero: where the op
        # is linear in each input with one, or a max or a min (constant factors).
        positions, _, adjoint = _linear(name, attrs)
        owners = _staged_call.owners(arity)
        route = _route(name, attrs)
        return (adjoint and all(owners[k] in positions for k in _wanted(flat))) or (
            route is not None and route[3])

    def grad_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str, arity: tuple,
                 attrs: tuple) -> tuple:
        params = dict(name=name, arity=arity, attrs=attrs)
        outs = grad_p.bind(*primals, **params)
        flat = primals[:-2]
        if not grads_linear(name, arity, attrs, flat):
            raise NotImplementedError(
                f"{name}: a second derivative is not implemented: the op is not linear in "
                "every input with a gradient (a product, a max_norm, per_sample_weights), "
                "nor a max or a min, or its gradient is not its tangent's transpose (a "
                "scatter update's gives each repeated index the slice's gradient), and "
                "its gradient has no derivative of its own")
        # Linear in the upstream gradient; the inputs' values it does not read.
        if _is_zero(tangents[-1]):
            return outs, [_zero(o) for o in outs]
        return outs, grad_p.bind(*primals[:-1], ad.instantiate_zeros(tangents[-1]), **params)
    ad.primitive_jvps[grad_p] = grad_jvp

    def grad_transpose(cts: Sequence[Any], *args: Any, name: str, arity: tuple,
                       attrs: tuple) -> list:
        flat = args[:-2]
        given = {k: ad.instantiate_zeros(c) for k, c in zip(_wanted(flat), cts)
                 if not _is_zero(c)}
        none = [None] * (len(flat) + 1)
        if not given:
            return none + [None]
        if _route(name, attrs) is not None:  # (a max's or a min's: grad_jvp lets no other)
            return none + [_routed(grad_p, name, arity, attrs, flat, args[-2], given)]
        return none + [_tangent(name, arity, attrs, flat, given, "a second derivative")]
    ad.primitive_transposes[grad_p] = grad_transpose
    return op_p, lin_p, grad_p


def _batched_gather(op_p: Any, args: Sequence[Any], dims: Sequence[Any], name: str,
                    attrs: tuple) -> tuple:
    """A gather under ``jax.vmap``, ``_batching.plan``'s rule: a batched table is one call
    with ``batch_dims`` (and a given axis) one more; batched indices alone from one table one
    call whose batch lands at the axis; ``take_along_axis`` broadcasts one table; a table
    that one call needs broadcast is broadcast."""
    import jax.numpy as jnp
    params, indices = args
    params_dim, indices_dim = dims
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    if params_dim is not None:
        params = jnp.moveaxis(params, params_dim, 0)
    if indices_dim is not None:
        indices = jnp.moveaxis(indices, indices_dim, 0)
    kind, changes, out_axis = _batching.plan(name, dict(attrs), params_dim is not None,
                                             params.ndim)
    if kind == "indices":
        return op_p.bind(params, indices, name=name, arity=(1, 1), attrs=attrs), out_axis
    if kind == "broadcast":
        params = params[None]
    elif params_dim is None:
        params = jnp.broadcast_to(params, (size, *params.shape))
    if indices_dim is None:
        indices = jnp.broadcast_to(indices, (size, *indices.shape))
    given = _frozen({**dict(attrs), **changes})
    return op_p.bind(params, indices, name=name, arity=(1, 1), attrs=given), 0
