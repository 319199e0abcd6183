"""ndgather's ops as native operations of PyTorch (issue 55): two ``torch.library`` custom
ops under the namespace ``ndgather``, ``ndgather::op`` and ``ndgather::op_grad``, which run
any op of the registry by name, as TensorFlow's op and XLA's handlers do. Each has a fake
(meta) implementation, so that shapes propagate under ``torch.compile``, and the forward op's
gradient is registered with ``register_autograd``. The ops of compiled code are typed, one
per op of the registry, its schema generated from the op's signature (see
:func:`_typed_schemas`), their CPU kernels C++ (``_torch_op.cc``, built on first use, see
:func:`native`): ``ndgather::<op>.native`` where no gradient flows,
``ndgather::<op>.with_grad`` where one does (its gradient formula C++ too), and its
gradient op ``ndgather::<op>.grad``.

A public function given ``torch.Tensor`` s calls the custom op when autograd,
``torch.compile`` or ``torch.func`` needs it: a tensor that requires grad, a call while
``torch.compile`` traces, or a tensor that a transform of ``torch.func`` wraps, or a dual
tensor of forward AD (those two through ``_torch_func``). Otherwise it reads the tensors in
place through DLPack, as before.

- The op's implementation is the eager NumPy path on the tensors' memory (``_core.run_op``);
  its fake implementation is the op's own shape inference (``_core.infer_op``), with a
  dynamic size where values give a dimension (the sorted segment reductions' rows).
- The gradient is the core's (``OpDef::grad``, ``_core.run_grad``), itself the custom op
  ``op_grad``, so that the backward graph compiles too.
- The ops run on the CPU: a tensor on another device finds no kernel, and PyTorch says so.

PyTorch is imported only by a caller that has it: this module is imported on first use.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import warnings
from typing import Any, Optional, Sequence

import numpy as np

from . import _core, _native_build, _ragged, _staged_call
from ._staged_call import shards  # noqa: F401 (the staging modules offer it)


def _compiling(torch: Any) -> bool:
    is_compiling = getattr(torch.compiler, "is_compiling", None)
    return bool(is_compiling and is_compiling())


def wanted(*values: Any) -> bool:
    """Whether a call on ``values`` must go through the custom ops: a ``torch.Tensor`` among
    them (or their lists) while ``torch.compile`` traces, or one that requires grad. A call
    outside ``torch.compile`` defines the ops first, so that a later compile finds them."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    tensor, tensors = torch.Tensor, []
    for v in values:
        if isinstance(v, tensor):
            tensors.append(v)
        elif isinstance(v, (list, tuple)):
            tensors += [x for x in v if isinstance(x, tensor)]
    if not tensors:
        return False
    if _compiling(torch):
        return True  # (before the ragged check, whose reads torch.compile would guard)
    if any(_ragged.is_ragged(v) for v in values if not isinstance(v, tensor)):
        return False  # the ragged path takes it (a tensor is none of its forms)
    define()
    return (any(t.requires_grad for t in tensors) or _transformed(torch, tensors)
            or _dual(torch, tensors))


def _transformed(torch: Any, tensors: Sequence[Any]) -> bool:
    """Whether a transform of ``torch.func`` wraps any of ``tensors`` (whose memory is then
    not theirs to read): one lookup where no transform runs."""
    if not torch._C._are_functorch_transforms_active():
        return False
    if _compiling(torch):
        return True  # (torch.compile's tensors are its own, unwrapped)
    return any(torch._C._functorch.is_functorch_wrapped_tensor(t) for t in tensors)


def _transforms(torch: Any, tensors: Sequence[Any]) -> Optional[tuple]:
    """Where :func:`_transformed`, whether the transforms around the call include a
    gradient's (``grad``, ``vjp``, ``jacrev``) and forward mode's (``jvp``, ``jacfwd``);
    else ``None``. Under ``torch.compile`` a constant of the graph (the transforms' nesting
    is guarded)."""
    if not _transformed(torch, tensors):
        return None
    from . import _torch_func
    if _compiling(torch) and _kinds_constant is not None:
        return _kinds_constant()
    return _torch_func.kinds()


def asarray(x: Any) -> Any:
    """``x`` as a tensor (a list or NumPy array beside one)."""
    import torch
    return torch.as_tensor(x)


def dtype(x: Any) -> np.dtype:
    """The NumPy dtype of a tensor's elements."""
    return _numpy_dtype(_dtype_name(asarray(x).dtype))


def _numpy_dtype(name: str) -> np.dtype:
    return _bfloat16() if name == "bfloat16" else np.dtype(name)


def fill(bad_indices: str, fill_value: Any, x: Any) -> Optional[bytes]:
    """A fill element's bytes in ``x``'s dtype (``_staged_call.fill_bytes``). Under
    ``torch.compile`` a constant where the value is a Python one (NumPy's conversion is not
    traced; see :func:`_as_written`)."""
    if fill_value is None and bad_indices != "fill":
        return None  # (the common call, at once: no value, and none to check)
    name = _dtype_name(asarray(x).dtype)
    torch = sys.modules["torch"]
    if isinstance(fill_value, torch.Tensor) and not _compiling(torch) and _transformed(
            torch, [fill_value]):
        raise TypeError("fill_value is one value for every index: a tensor that torch.func "
                        "maps (batched) or differentiates is not taken; pass a number")
    if _fill_constant is not None and _as_written(bad_indices) and _as_written(fill_value):
        return _made(_fill_constant(bad_indices, fill_value, name))
    # Otherwise eagerly, outside the graph (torch.compile's own NumPy would wrap a value
    # that NumPy refuses): a tensor's value read at each call. (Also where no trace runs:
    # a call that torch.compile runs outside its graph still has its callees' frames
    # compiled, where NumPy's calls would be traced.)
    return (_fill_eager or _fill_text)(bad_indices, fill_value, name)


def _fill_text(bad_indices: str, fill_value: Any, name: str) -> Optional[bytes]:
    dtype = _numpy_dtype(name) if bad_indices == "fill" else None  # (bfloat16 needs ml_dtypes)
    return _staged_call.fill_bytes(bad_indices, fill_value, dtype)


def _as_written(value: Any) -> bool:
    """Whether ``torch.compile`` holds ``value`` as a Python constant, which a constant
    function may take: it would freeze a tensor's or a NumPy scalar's value at the first
    trace, unguarded. (A symbolic number passes, since ``type`` calls it an ``int`` or a
    ``float`` under ``torch.compile`` and nothing there tells it apart: a number passed as an
    argument that changes between calls is then refused under ``fullgraph=True``.)"""
    if value is None or isinstance(value, (str, bytes)):
        return True  # (without type(): a fill element's bytes are a constant function's)
    t = type(value)
    return t in (bool, int, float, complex) or (
        t in (list, tuple) and all(type(v) is int for v in value))


def _answered(f: Any) -> Any:
    """``f`` for ``assume_constant_result``: ``(True, its result)``, or where it raises
    ``(False, the error's class name, its message)``, for :func:`_made` to raise in the
    traced code (one raised under ``assume_constant_result`` would come out as dynamo's
    internal error)."""
    def call(*args: Any) -> tuple:
        try:
            return (True, f(*args))
        except Exception as e:
            return (False, type(e).__name__, str(e))
    return call


def _made(answer: tuple) -> Any:
    """A constant function's result (see :func:`_answered`), or its error, raised in its
    class, so that a call outside ``fullgraph=True`` raises it as an eager call does."""
    if answer[0]:
        return answer[1]
    raised = (ValueError, TypeError, OverflowError, IndexError, _core.InvalidArgumentError)
    raise next((c for c in raised if c.__name__ == answer[1]), RuntimeError)(answer[2])


def astype(x: Any, name: str) -> Any:
    """``x`` as a tensor of the dtype named ``name``."""
    import torch
    return asarray(x).to(getattr(torch, name))


def flat(x: Any) -> Any:
    """``x`` as a tensor, flattened, row-major."""
    return asarray(x).reshape(-1)


def no_out(name: str, out: Any) -> None:
    """Refuses ``out``: autograd and compiled graphs make their own results."""
    if out is not None:
        raise TypeError(f"{name}: out is not taken with autograd, torch.compile or torch.func's "
                        "transforms; use the result")


def _dtype_name(dtype: Any) -> str:
    """A torch dtype's name as the core spells it (``torch.float32`` → ``float32``)."""
    return str(dtype).rpartition(".")[2]


@functools.lru_cache(maxsize=None)
def _lists(name: str) -> tuple:
    """For each input of the op's signature, whether it takes a list of tensors."""
    for op, _, inputs, _ in _core.op_signatures():
        if op == name:
            return tuple(kind in ("List", "OptionalList") for _, kind in inputs)
    raise ValueError(f"no op named {name!r}")


def _groups(name: str, flat: Sequence[Any], arity: Sequence[int]) -> list:
    """The flat tensors (or arrays) as the op's inputs: ``arity[k]`` of them for input ``k``,
    a list for a list input, ``None`` for one left out."""
    lists = _lists(name)
    if len(arity) > len(lists) or any(n < 0 or (n > 1 and not lists[k])
                                      for k, n in enumerate(arity)) or sum(arity) != len(flat):
        raise ValueError(f"{name}: arities {list(arity)} do not describe {len(flat)} tensors "
                         f"for its {len(lists)} inputs")
    out, at = [], 0
    for k, n in enumerate(arity):
        part = list(flat[at:at + n])
        at += n
        out.append(part if k < len(lists) and lists[k] else (part[0] if n else None))
    return out


def _numpy(t: Any) -> Any:
    """A CPU tensor's memory as a NumPy array (no copy): the ops' bodies run the NumPy path,
    which never routes back here, even while ``torch.compile`` runs them. ``Tensor.numpy``
    costs a tenth of DLPack's exchange; a tensor it refuses (a conjugate or negative view)
    goes through DLPack."""
    t = t.detach()
    if t.dtype is sys.modules["torch"].bfloat16:
        # NumPy has no bfloat16: its bits, as ml_dtypes' bfloat16 (the core's type of it).
        return t.view(sys.modules["torch"].int16).numpy().view(_bfloat16())
    try:
        return t.numpy()
    except (RuntimeError, TypeError):
        from . import _array
        return _array(t)


def _bfloat16() -> np.dtype:
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError("bfloat16 tensors need ml_dtypes (pip install ml_dtypes), NumPy's "
                        "bfloat16 type, to be read by the core") from None
    return np.dtype(ml_dtypes.bfloat16)


def _tensor(a: np.ndarray) -> Any:
    """A result of the core as a tensor (bfloat16 from its bits)."""
    torch = sys.modules["torch"]
    a = np.ascontiguousarray(a)
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _with_grad(tensors: Sequence[Any]) -> list:
    """The positions of the tensors of a dtype with a gradient in the core."""
    with_grad = _staged_call.grad_dtypes()
    return [k for k, t in enumerate(tensors) if _dtype_name(t.dtype) in with_grad]


#: The custom op's own line among the attributes: PyTorch's ``sparse=True``, the layout of
#: an ``embedding_bag``'s shards' gradients, which only :func:`ops`' backward reads (the core's
#: op has no such attribute).
_SPARSE_GRAD = "torch_sparse_grad=true"


def _lines(attrs: str) -> list:
    """The op's one string of attributes as its items, ``name=text`` each (one string, not two
    lists, so that autograd sees one argument). Items are joined by ``;``: inductor's C++
    wrapper (``cpp_wrapper``) writes a string into C++ as it is, and a line break there broke
    its build. Line breaks still separate, as in programs that an earlier version saved
    (``torch.export``)."""
    return attrs.replace("\n", ";").split(";")


def _split(attrs: str) -> tuple:
    """The attributes' names and texts from the op's one string (see :func:`_lines`)."""
    pairs = [line.partition("=") for line in _lines(attrs) if line and line != _SPARSE_GRAD]
    return [n for n, _, _ in pairs], [v for _, _, v in pairs]


def _attrs_text(name: str, items: tuple, sparse_grad: bool) -> str:
    """The attributes ``(name, value)`` as the op's one string (see :func:`_lines`; ``None``
    values left out, a value with a separator refused by ``_staged_call.text``), with
    :data:`_SPARSE_GRAD`'s line where asked. Under ``torch.compile`` a constant (see
    :func:`define`): its reads, guarded on every call, would cost more than the op."""
    given = ((k, _staged_call.plain(name, k, v)) for k, v in items if v is not None)
    lines = [f"{k}={_staged_call.text(name, k, v)}" for k, v in given]
    return ";".join(lines + ([_SPARSE_GRAD] if sparse_grad else []))


def _dual(torch: Any, tensors: Sequence[Any]) -> bool:
    """Whether forward-mode AD's dual tensors are among ``tensors`` (one lookup where no
    dual level is open). (A tensor that ``torch.func`` wraps has no dual to unpack: see
    ``_torch_func``.)"""
    forward_ad = torch.autograd.forward_ad
    return forward_ad._current_level >= 0 and any(
        isinstance(t, torch.Tensor)
        and not torch._C._functorch.is_functorch_wrapped_tensor(t)
        and forward_ad.unpack_dual(t).tangent is not None for t in tensors)


#: The classes the C++ kernel raises ndgather's errors as (``_torch_op.cc``'s ``Raise``).
_KERNEL_ERRORS = (ValueError, IndexError, TypeError, NotImplementedError, MemoryError,
                  RuntimeError)

#: The types of attribute values whose text is kept (immutable, so the text stays theirs).
_PLAIN = frozenset({type(None), bool, int, float, str, bytes})


@functools.lru_cache(maxsize=256)
def _attrs_text_of_plain(name: str, items: tuple, types: tuple, sparse_grad: bool) -> str:
    """:func:`_attrs_text` of plain values, kept: an eager call's attributes repeat. (Keyed by
    the values' types too: ``True == 1``, and their texts differ.)"""
    return _attrs_text(name, items, sparse_grad)


def _no_tangents(tensors: Sequence[Any], name: str = "") -> None:
    """Refuses forward-mode AD's dual tensors where a call cannot carry their tangents: the
    generic op's Python body, the gradient ops, and ``out=`` (whose write would leave a
    tangent as it was). (:func:`run` takes the typed ops' function for them.)"""
    if _dual(sys.modules["torch"], tensors):
        raise RuntimeError(f"ndgather: {name + ': ' if name else ''}forward-mode AD (jvp) is "
                           "not implemented for this call; use reverse mode (backward)")


def _op_body(inputs: Sequence[Any], arity: Sequence[int], name: str, attrs: str) -> Any:
    import torch
    _no_tangents(inputs, name)
    attrs = _core.text_attrs(name, *_split(attrs))
    groups = _groups(name, [_numpy(t) for t in inputs], arity)
    result = _core.run_op(name, groups, attrs)
    if not isinstance(result, np.ndarray):
        raise TypeError(f"{name} gives a result per shard, which one tensor cannot hold; "
                        "call it eagerly")
    return _tensor(result)


def _op_fake(inputs: Sequence[Any], arity: Sequence[int], name: str, attrs: str) -> Any:
    import torch
    attrs = _core.text_attrs(name, *_split(attrs))
    _one_device(name, inputs)
    firsts = [(g[0] if g else None) if isinstance(g, list) else g
              for g in _groups(name, list(inputs), arity)]
    out_dtype, shape = _inferred(name, firsts, attrs)
    if shape is None:
        raise ValueError(f"{name}: the result's rank does not follow from the inputs' shapes")
    if any(d is None for d in shape):
        # A size the values give (the sorted segment reductions' rows), or one the inputs'
        # dynamic sizes leave open.
        ctx = torch.library.get_ctx()
        shape = [ctx.new_dynamic_size() if d is None else d for d in shape]
    like = inputs[0]
    return like.new_empty(shape, dtype=getattr(torch, out_dtype) if out_dtype else like.dtype)


def _dim(d: Any) -> Optional[int]:
    """A fake tensor's dimension as a number, or ``None`` where it has none yet (a size that
    values give, such as a sorted segment reduction's rows). A symbolic size becomes its
    value, guarded: the compiled code then serves that size only."""
    try:
        return int(d)
    except Exception:  # torch's GuardOnDataDependentSymNode for an unbacked size
        return None


def _facts(firsts: Sequence[Any], dim: Any) -> list:
    return [None if t is None else (_dtype_name(t.dtype), [dim(d) for d in t.shape])
            for t in firsts]


def _inferred(name: str, firsts: Sequence[Any], attrs: dict) -> tuple:
    """The result's dtype and shape from the core's shape inference, keeping the inputs'
    symbolic sizes (``torch.compile``'s dynamic shapes) where the result's follow them, so
    that one compiled graph serves every batch size, as PyTorch's own ops do.

    The core infers on numbers, so it is asked on each symbolic size's current value, then
    twice with the sizes moved, each by its own step, of two unrelated kinds (powers of two,
    and three times those plus one). A result size that moved by one size's step both times
    is that size, or one less (``include_last_offset``'s bags); one that did not move is a
    constant. Where the moved sizes fail a check, or a result size follows several, the
    sizes of equal value move together (their equality is then guarded), then each size in
    turn is held at its value (guarded: an index depth must be a number); at the last,
    every size is guarded at its value."""
    symbols: dict = {}  # expr -> (the size, its value)

    def current(d: Any) -> Optional[int]:
        node = getattr(d, "node", None)
        if isinstance(d, int) or node is None or node.hint is None:
            return _dim(d)  # a number, or a size the values give: none, without a guard
        symbols.setdefault(node.expr, (d, int(node.hint)))
        return int(node.hint)

    out_dtype, shape = _core.infer_op(name, _facts(firsts, current), attrs)
    if not symbols or shape is None:
        return out_dtype, shape
    values = sorted({v for _, v in symbols.values()})
    tries = [(None, False)]
    if len(values) < len(symbols):
        tries.append((None, True))
    tries += [(k, True) for k in symbols]
    for held, together in tries:
        places = {k: values.index(v) if together else i
                  for i, (k, (_, v)) in enumerate(symbols.items())}
        found = [_moved(name, firsts, attrs, shape, symbols,
                        {k: 0 if k == held else step(p) for k, p in places.items()})
                 for step in (lambda p: 16 << p, lambda p: 3 * (16 << p) + 1)]
        if None in found or [_key(h) for h in found[0]] != [_key(h) for h in found[1]]:
            continue
        if held is not None:
            _dim(symbols[held][0])  # guarded at its value
        moving = [(k, d) for k, (d, _) in symbols.items() if k != held]
        for k, d in moving:  # sizes that moved together are guarded equal
            first = next(d0 for k0, d0 in moving if places[k0] == places[k])
            if d is not first:
                bool(first == d)
        return out_dtype, [a if how is None else how[0] + how[1] for a, how in
                           zip(shape, found[0])]
    return _core.infer_op(name, _facts(firsts, _dim), attrs)


def _key(how: Optional[tuple]) -> Optional[tuple]:
    """A result size's ``(size, offset)`` compared by the size's identity (``==`` on a
    symbolic size would guard it)."""
    return None if how is None else (id(how[0]), how[1])


def _moved(name: str, firsts: Sequence[Any], attrs: dict, shape: list, symbols: dict,
           steps: dict) -> Optional[list]:
    """Which input size each result size is, by the core's inference with each symbolic
    size moved by its step (see :func:`_inferred`): ``(size, offset)``, or ``None`` for a
    constant or a size the values give; ``None`` where it cannot say."""
    def moved(d: Any) -> Optional[int]:
        node = getattr(d, "node", None)
        if isinstance(d, int) or node is None or node.expr not in symbols:
            return _dim(d)
        return symbols[node.expr][1] + steps[node.expr]

    try:
        _, other = _core.infer_op(name, _facts(firsts, moved), attrs)
    except Exception:  # a check that only the current values pass
        return None
    if other is None or len(other) != len(shape):
        return None
    by_step = {}
    for k, (d, v) in symbols.items():
        by_step.setdefault(steps[k], (d, v))  # sizes that share a step are guarded equal
    out = []
    for a, b in zip(shape, other):
        if a is None or a == b:
            out.append(None)  # a constant, or a size the values give
            continue
        d, v = by_step.get(None if b is None else b - a, (None, None))
        if d is None or a - v not in (0, -1):
            return None
        out.append((d, a - v))
    return out


def _grad_body(inputs: Sequence[Any], output: Any, upstream: Any, arity: Sequence[int],
               name: str, attrs: str) -> list:
    import torch
    _no_tangents([*inputs, output, upstream], name)
    if not _core.op_has_grad(name):
        raise RuntimeError(_staged_call.no_grad(name))
    groups = _groups(name, [_numpy(t) for t in inputs], arity)
    grads = _core.run_grad(name, groups, _numpy(output), _numpy(upstream), *_split(attrs))
    # One result per input tensor of a dtype with a gradient, in order: its gradient or zeros.
    return [_tensor(grads[k])
            if grads[k] is not None else torch.zeros_like(inputs[k])
            for k in _with_grad(inputs)]


def _grad_fake(inputs: Sequence[Any], output: Any, upstream: Any, arity: Sequence[int],
               name: str, attrs: str) -> list:
    _one_device(name, [*inputs, output, upstream])
    return [inputs[k].new_empty(inputs[k].shape) for k in _with_grad(inputs)]


def _one_device(name: str, tensors: Sequence[Any]) -> None:
    """Refuses tensors on several devices, as PyTorch's own ops do: the fake implementations
    run for any call with a tensor on ``meta``, and would answer it with uninitialised
    memory on another device."""
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise RuntimeError(f"{name}: expected all tensors to be on the same device, but found "
                           f"at least two devices, {', '.join(sorted(map(str, devices)))}")


SCHEMA = "(Tensor[] inputs, int[] arity, str name, str attrs)"
GRAD_SCHEMA = "(Tensor[] inputs, Tensor output, Tensor upstream, int[] arity, str name, str attrs)"

#: A registry input's kind as a typed op's argument (any other kind is one tensor).
_ARGUMENT = {"List": "Tensor[]", "OptionalList": "Tensor[]?", "Optional": "Tensor?"}

#: The typed ops' overloads: where no gradient flows, where one does, and the gradient.
_ROLES = ("native", "with_grad", "grad")


def _typed_schemas(name: str) -> tuple:
    """The schemas of the registry op ``name``'s typed ops: its inputs, each a tensor, an
    optional one or a list, then its attributes' one string (see :func:`_lines`); the
    gradient's with the op's output and the upstream gradient before the string. (Typed
    arguments: a list of every tensor and one of their arities cost more a call inside
    ``torch.compile`` than the core's call; bench/LOG.md, "torch.compile: a typed op per
    registry op".)"""
    inputs = next(i for op, _, i, _ in _core.op_signatures() if op == name)
    taken = {arg for arg, _ in inputs} & {"attrs", "output", "upstream"}
    if taken:
        raise ValueError(f"{name}: an input named {sorted(taken)[0]!r}, which its typed "
                         "op's schema takes for itself")
    args = [f"{_ARGUMENT.get(kind, 'Tensor')} {arg}" for arg, kind in inputs]
    return (f"({', '.join([*args, 'str attrs'])}) -> Tensor",
            f"({', '.join([*args, 'Tensor output', 'Tensor upstream', 'str attrs'])}) "
            "-> Tensor[]")


def _flat(args: Sequence[Any]) -> tuple:
    """A typed op's inputs (a tensor, ``None`` or a list each) as the flat tensors and their
    arities, the generic op's arguments."""
    tensors: list = []
    arity: list = []
    for x in args:
        if x is None:
            arity.append(0)
        elif isinstance(x, (list, tuple)):
            tensors += x
            arity.append(len(x))
        else:
            tensors.append(x)
            arity.append(1)
    return tensors, arity


def _typed_fake(name: str, *args: Any) -> Any:
    return _op_fake(*_flat(args[:-1]), name, args[-1])


def _typed_grad_fake(name: str, *args: Any) -> list:
    return _grad_fake(*_typed_grad_call(name, args))


def _typed_body(name: str, *args: Any) -> Any:
    return _op_body(*_flat(args[:-1]), name, args[-1])


def _typed_grad_body(name: str, *args: Any) -> list:
    return _grad_body(*_typed_grad_call(name, args))


def _typed_grad_call(name: str, args: tuple) -> tuple:
    """A typed gradient op's arguments as the generic one's, its output and upstream gradient
    checked: PyTorch passes None for a required tensor."""
    if args[-3] is None or args[-2] is None:
        raise TypeError(f"ndgather: {name}: the gradient takes the op's output and the "
                        "upstream gradient, not None")
    tensors, arity = _flat(args[:-3])
    return tensors, args[-3], args[-2], arity, name, args[-1]


def _typed_setup_context(name: str, ctx: Any, inputs: tuple, output: Any) -> None:
    _setup_context(ctx, (*_flat(inputs[:-1]), name, inputs[-1]), output)


def _typed_backward(ctx: Any, upstream: Any) -> tuple:
    """The Python formula's gradients (:func:`_backward`) as the typed op's arguments take
    them: one per tensor, a list per list, none for the attributes."""
    per_input = _backward(ctx, upstream)[0]
    arity, name = ctx.call[0], ctx.call[1]
    grads, at = [], 0
    for is_list, n in zip(_lists(name), arity):
        part = per_input[at:at + n]
        at += n
        grads.append(list(part) if is_list else (part[0] if n else None))
    return (*grads, None)


def _setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
    tensors, arity, name, attrs = inputs
    # The output only where the gradient reads it (a max does, a gather not): a result
    # changed in place then still has a backward, as PyTorch's own gather's.
    reads = _grad_reads_output(name)
    ctx.save_for_backward(*tensors, *([output] if reads else []))
    ctx.call = (list(arity), name, attrs, reads)


def _backward(ctx: Any, upstream: Any) -> tuple:
    arity, name, attrs, reads = ctx.call
    saved = ctx.saved_tensors
    tensors, output = (saved[:-1], saved[-1]) if reads else (saved, upstream)
    if _SPARSE_GRAD in _lines(attrs):
        return _sparse_grads(tensors, output, upstream, arity, attrs), None, None, None
    grads = iter(ops()[1](tensors, output, upstream, arity, name, attrs))
    wanted_positions = set(_with_grad(tensors))
    per_input = [next(grads) if k in wanted_positions else None for k in range(len(tensors))]
    return per_input, None, None, None


def _grad_setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
    tensors, _, _, arity, name, attrs = inputs
    ctx.save_for_backward(*tensors)
    ctx.call = (list(arity), name, attrs)


def _grad_backward(ctx: Any, cotangents: Any) -> tuple:
    """The generic gradient op's derivative (a second derivative of a call that takes the
    generic op: a strided view, ``torch.jit.trace``), as the typed one's C++ kernel gives
    it: where the op is linear in exactly the inputs with a gradient and its gradient is
    its tangent's transpose, the gradient is linear in the upstream gradient, and this is
    the op's tangent on the cotangents, through the generic op (so that it is differentiated
    in turn); elsewhere refused, in the words of the typed op's."""
    import torch

    from . import _torch_func
    arity, name, attrs = ctx.call
    tensors = ctx.saved_tensors
    positions, tangent_attrs, adjoint = _torch_func._linear(name, attrs)
    owners = _staged_call.owners(arity)
    wanted = _with_grad(tensors)
    if not adjoint or [k for k in range(len(tensors)) if owners[k] in positions] != wanted:
        raise RuntimeError(_torch_func._NOT_LINEAR_GRAD.format(name))
    given, each = list(tensors), iter(cotangents)
    for k in wanted:
        c = next(each, None)
        given[k] = torch.zeros_like(tensors[k]) if c is None else c
    return ([None] * len(tensors), None, ops()[0](given, arity, name, tangent_attrs), None,
            None, None)


@functools.lru_cache(maxsize=None)
def ops() -> tuple:
    """The two custom ops, defined on first use: ``(op, op_grad)``."""
    import torch

    from . import _torch_func
    # CPU kernels only: a tensor on another device finds none, and PyTorch says so.
    op = torch.library.custom_op("ndgather::op", _op_body, mutates_args=(),
                                 device_types="cpu", schema=f"{SCHEMA} -> Tensor")
    grad = torch.library.custom_op("ndgather::op_grad", _grad_body, mutates_args=(),
                                   device_types="cpu", schema=f"{GRAD_SCHEMA} -> Tensor[]")
    op.register_fake(_op_fake)
    grad.register_fake(_grad_fake)
    op.register_autograd(_backward, setup_context=_setup_context)
    grad.register_autograd(_grad_backward, setup_context=_grad_setup_context)
    # The typed ops of compiled code, each registry op's, their CPU kernels C++ (see
    # `native`), with the Python ops' fakes: `.native` where no gradient flows, with no
    # autograd kernel (a Python one runs on every call, about 4 µs; PyTorch's own fallback
    # for it is C++), and `.with_grad` where one does, with the gradient formula in C++ (about
    # 14 µs a call in Python), whose backward calls `.grad`.
    for name, *_ in _core.op_signatures():
        forward, backward = _typed_schemas(name)
        for role in _ROLES:
            torch.library.define(f"ndgather::{name}.{role}", backward if role == "grad"
                                 else forward)
            torch.library.register_fake(f"ndgather::{name}.{role}", functools.partial(
                _typed_grad_fake if role == "grad" else _typed_fake, name))
        _torch_func.register(torch, name, _ROLES)
    _torch_func.register_generic(op, grad)
    return op, grad


def build() -> str:
    """The path of the C++ kernel's library for the installed PyTorch and this extension,
    built on first use (see ``_native_build``)."""
    import torch
    from torch.utils import cpp_extension
    _core.torch_kernel()  # this build of the extension has the kernel's C ABI
    abi = int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)))
    flags = ["-std=c++20", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
             *(f"-I{p}" for p in cpp_extension.include_paths()),
             *(f"-L{p}" for p in cpp_extension.library_paths()), "-lc10", "-ltorch_cpu"]
    return _native_build.build("PyTorch op", "_torch_op.cc", "torch", torch.__version__, flags)


_native: Optional[bool] = None
#: Why the C++ kernels could not be built, until a caller that warns has said so.
_why: Optional[str] = None
_native_constant: Any = None
_kinds_constant: Any = None
_attrs_constant: Any = None
_fill_constant: Any = None
_fill_eager: Any = None


def _version(text: str) -> tuple:
    """A version's first two numbers (``"2.15.0+cpu"`` → ``(2, 15)``)."""
    parts = text.split("+")[0].split(".")[:2]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        return (0, 0)


def native(quiet: bool = False) -> bool:
    """Gives the typed ops, ``ndgather::<op>.native``, ``.with_grad`` and ``.grad``, their
    CPU kernels, once: the C++ ones of ``_torch_op.cc``, built and loaded, which code that
    ``torch.compile`` made calls with no Python between (and the gradient formula in C++);
    where they cannot be built, the Python ops' bodies and formula, with a warning that says
    why (once, after the choice is made: a warning raised as an error does not build again;
    ``quiet`` for eager autograd, which then keeps the generic op, as without the build).
    True where the C++ kernels run. (Called as a constant while ``torch.compile`` traces,
    so that the build runs outside the trace.)"""
    global _native, _why
    import torch
    define()
    with _defining:
        if _native is None:
            try:
                fd = _native_build.opened(build())
                try:
                    torch.ops.load_library(f"/proc/self/fd/{fd}")
                finally:
                    os.close(fd)
                _native = True
            except (ImportError, OSError, RuntimeError) as e:
                for name, *_ in _core.op_signatures():
                    _python_kernels(torch, name)
                _native, _why = False, str(e)
        why, _why = (None, _why) if quiet else (_why, None)
    if why is not None:
        warnings.warn(f"ndgather: its typed ops (torch.compile's, torch.func's) run through "
                      f"their Python bodies, about 10 µs more per call: {why}",
                      RuntimeWarning, stacklevel=2)
    return _native


def _python_kernels(torch: Any, name: str) -> None:
    """The typed ops' kernels where the C++ ones cannot be built: the Python ops' bodies, no
    gradient for ``.native`` and ``.grad`` (a backward raises, in the words of the C++
    library's fallback, which names the op without its overload), and the gradient formula,
    in Python, for ``.with_grad``."""
    for role in _ROLES:
        op_name = f"ndgather::{name}.{role}"
        torch.library.impl(op_name, "cpu", functools.partial(
            _typed_grad_body if role == "grad" else _typed_body, name))
        if role == "with_grad":
            torch.library.register_autograd(
                op_name, _typed_backward,
                setup_context=functools.partial(_typed_setup_context, name))
        else:
            torch.library.register_autograd(
                op_name, functools.partial(_no_derivative, name),
                setup_context=_no_context)


def _sparse_grads(tensors: Sequence[Any], output: Any, upstream: Any, arity: Sequence[int],
                  attrs: str) -> list:
    """An ``embedding_bag``'s gradients with PyTorch's ``sparse=True``: each shard's as a
    sparse COO tensor of a row per id it served, in input order, as PyTorch's (the core's
    ``embedding_bag_grad``); ``per_sample_weights``', where it requires grad, from the dense
    gradient op."""
    import torch
    name = "embedding_bag"
    if torch.is_grad_enabled() and any(t.requires_grad for t in (*tensors, upstream)):
        # (`create_graph=True`: a sparse gradient made in NumPy has no graph of its own, where
        # a dense one's derivative is the op's tangent.)
        raise RuntimeError("derivative for ndgather::embedding_bag with sparse=True is not "
                           "implemented: its sparse gradients have none; pass sparse=False "
                           "for create_graph=True")
    shards, ids, offsets, weights = _groups(name, [_numpy(t) for t in tensors], arity)
    attrs_of = dict(_core.text_attrs(name, *_split(attrs)), sparse=True)
    slices = _core.run_op("embedding_bag_grad",
                          [shards, ids, _numpy(upstream), offsets, weights], attrs_of)
    grads: list = [torch.sparse_coo_tensor(torch.from_numpy(i)[None], _tensor(v), shape)
                   for i, v, shape in slices]
    grads += [None] * (len(tensors) - len(grads))
    at = sum(arity[:3])
    if weights is not None and tensors[at].requires_grad:
        dense = _grad_body(tensors, output, upstream, arity, name, attrs)
        grads[at] = dense[_with_grad(tensors).index(at)]
    return grads


@functools.lru_cache(maxsize=None)
def _grad_reads_output(name: str) -> bool:
    return _core.grad_reads_output(name)


_defined = False
_unavailable = False
_defining = threading.Lock()


def define() -> None:
    """Defines the custom ops, once: when ndgather is imported after torch, or on the first
    call with a tensor outside ``torch.compile`` (which must not trace their definition).
    PyTorch before 2.4 has no ``torch.library.custom_op``: nothing is defined there."""
    global _defined, _unavailable
    if _defined or _unavailable:
        return
    import torch
    if not hasattr(torch.library, "custom_op"):
        _unavailable = True
        return
    with _defining:
        if not _defined:
            ops()
            global _native_constant, _attrs_constant, _fill_constant, _fill_eager
            global _kinds_constant
            # (`torch.compile` runs it as it traces, and takes its result as a constant.
            # Before PyTorch 2.14, `torch.compiler.is_exporting()` also answers True under a
            # plain `torch.compile` (pytorch#176347), so there the C++ kernel is not used.)
            constant = getattr(torch.compiler, "assume_constant_result", None)
            if constant is not None and _version(torch.__version__) >= (2, 14):
                _native_constant = constant(native)
            # (NumPy's conversion outside torch.compile even where a frame that it skips
            # calls it: its callees' frames are still compiled, NumPy's calls as its own.)
            _fill_eager = torch.compiler.disable(_fill_text)
            if constant is not None:
                from . import _torch_func
                _kinds_constant = constant(_torch_func.kinds)
                _attrs_constant = constant(_answered(_attrs_text))
                _fill_constant = constant(_answered(_fill_eager))
            _defined = True


def run(name: str, inputs: Sequence[Any], attrs: Optional[dict] = None, *,
        sparse_grad: bool = False) -> Any:
    """The registered op ``name`` as PyTorch's custom op ``ndgather::op``: ``inputs`` in the
    order of the op's signature (``None`` for one left out, :func:`shards` for a list input
    such as an embedding table's shards), ``attrs`` its attributes (``None`` values take the
    op's defaults). ``sparse_grad``: an ``embedding_bag``'s shards get sparse gradients."""
    import torch
    compiling = _compiling(torch)
    if sparse_grad and compiling:
        raise NotImplementedError(
            f"{name}: sparse=True gives sparse gradients in eager autograd only; "
            "torch.compile builds dense ones: pass sparse=False under torch.compile")
    if not compiling:
        define()
    if not _defined:
        raise RuntimeError(
            f"{name}: ndgather's PyTorch ops are defined when ndgather is imported after "
            "torch, or by a first call with a tensor outside torch.compile, on PyTorch 2.4 or "
            "newer; import torch first")
    groups = _staged_call.groups(inputs)
    tensors = [torch.as_tensor(a) for g in groups for a in g]
    attrs = attrs or {}
    items = tuple(attrs.items())
    if compiling:
        joined = (_made(_attrs_constant(name, items, sparse_grad))
                  if _attrs_constant is not None and all(_as_written(v) for _, v in items)
                  else _attrs_text(name, items, sparse_grad))
    elif _PLAIN.issuperset(types := tuple(map(type, attrs.values()))):
        joined = _attrs_text_of_plain(name, items, types, sparse_grad)
    else:
        joined = _attrs_text(name, items, sparse_grad)
    kinds = _transforms(torch, tensors)
    if kinds is None and not compiling and _dual(torch, tensors):
        kinds = (False, True)  # forward AD's dual tensors: the function, with its jvp
    # (Under torch.compile, a vmap alone takes the typed ops below, whose batching rules it
    # traces; a function of its own it cannot batch, `ApplyTemplate`.)
    if kinds is not None and (kinds != (False, False) or not compiling):
        from . import _torch_func
        if sparse_grad and (any(kinds) or any(_torch_func.requires_grad(torch, t)
                                               for t in tensors)):
            raise NotImplementedError(
                f"{name}: sparse=True gives sparse gradients in eager autograd only; "
                "torch.func's transforms build dense ones: pass sparse=False under them")
        (_native_constant if compiling and _native_constant else native)()
        return _torch_func.call(name, _typed_inputs(inputs, groups, tensors), joined, kinds)
    role = None if sparse_grad else _native_op(torch, tensors, compiling, kinds is not None)
    if role is not None:
        typed = _typed_inputs(inputs, groups, tensors)
        op = getattr(getattr(torch.ops.ndgather, name), role)
        if compiling:
            _native_constant()
            return op(*typed, joined)
        try:
            return op(*typed, joined)
        except _KERNEL_ERRORS:
            # The C++ kernel raises the built-in class of ndgather's error: the generic op,
            # which raises ndgather's own, runs the call again (an error costs it twice).
            # (Only those classes: a hook's own signal, as checkpointing's early stop, passes.)
            pass
    return torch.ops.ndgather.op(tensors, [len(g) for g in groups], name, joined)


def _typed_inputs(inputs: Sequence[Any], groups: Sequence[list], tensors: Sequence[Any]) -> list:
    """Each input as a typed op's schema takes it: a list, a tensor or None."""
    typed, at = [], 0
    for x, g in zip(inputs, groups):
        part = list(tensors[at:at + len(g)])
        at += len(g)
        typed.append(part if isinstance(x, _staged_call.Shards) else part[0] if part else None)
    return typed


def _no_context(ctx: Any, inputs: tuple, output: Any) -> None:
    pass


def _no_derivative(op_name: str, ctx: Any, *upstream: Any) -> tuple:
    raise RuntimeError(f"derivative for ndgather::{op_name} is not implemented")


def _native_op(torch: Any, tensors: Sequence[Any], compiling: bool,
               vmap: bool) -> Optional[str]:
    """The typed op's overload with the C++ kernel that a call takes, if any: in code that
    ``torch.compile`` makes, and eagerly where autograd records the call (not in a program
    ``torch.export`` saves, which must run where ndgather has not built it, nor where the
    kernel could not be built), on tensors laid out row-major (the C++ kernel reads them so;
    it would copy any other, a broadcast view whole, where the Python body reads it in
    place); ``with_grad`` where a gradient flows, else ``native``. (Not for sparse
    gradients, which only the Python formula makes: a call with ``sparse=True`` that
    ``torch.compile`` runs outside its graph may still find ``_compiling`` true, in a frame
    of its own that it compiled.)"""
    exporting = getattr(torch.compiler, "is_exporting", None)
    if exporting is None or exporting():
        return None
    if not compiling:
        # Eager autograd: the C++ kernel where it is built (a build on the first call), about
        # 90 µs less a call than the generic op's Python; not for torch.jit.trace, whose
        # graph must not depend on the grad mode, nor run without the kernel's library.
        # (Built and loaded wherever autograd records a call, since its library also gives
        # the generic op, which the others take, its rule for PyTorch's legacy vmap.)
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors) \
                and (_native or native(quiet=True)) \
                and all(t.is_contiguous() for t in tensors) and not torch.jit.is_tracing():
            return "with_grad"
        return None
    if _native_constant is None or not all(t.is_contiguous() for t in tensors):
        return None
    # (Under vmap a batched tensor answers False for requires_grad, whatever it wraps:
    # where grad mode is on, the op with the gradient, which records none where none flows.)
    if torch.is_grad_enabled() and (vmap or any(t.requires_grad for t in tensors)):
        return "with_grad"
    return "native"
