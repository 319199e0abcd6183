"""ndgather's gathers as native operations of PyTorch (issue 55): ``torch.library`` custom
ops under the namespace ``ndgather``, each with a fake (meta) implementation, so that shapes
propagate under ``torch.compile``, and its gradient registered with ``register_autograd``.

A public function (``ndgather.gather``, ``gather_nd``, ``take_along_axis``, ``take``) given a
``torch.Tensor`` calls the custom op when autograd or ``torch.compile`` needs it: a tensor
that requires grad, or a call while ``torch.compile`` traces. Otherwise it reads the tensor
in place through DLPack, as before.

- The ops' implementations are the eager NumPy path on the tensors' memory; the fake
  implementations are the op's own shape inference (``_core.infer_op``).
- The gradient of each gather is the core's (``gather_grad``, ``gather_nd_grad``,
  ``take_along_axis_grad``), itself a custom op, so that the backward graph compiles too.
- The ops run on the CPU: a tensor on another device is refused by the eager path, with a
  message that says how to move it.

PyTorch is imported only by a caller that has it: this module is imported on first use.
"""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any, Callable, Sequence

from . import _core


def _compiling(torch: Any) -> bool:
    is_compiling = getattr(torch.compiler, "is_compiling", None)
    return bool(is_compiling and is_compiling())


def wanted(*values: Any) -> bool:
    """Whether a call on ``values`` must go through the custom ops: a ``torch.Tensor`` among
    them while ``torch.compile`` traces, or one that requires grad. A call outside
    ``torch.compile`` defines the ops first, so that a later compile finds them."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    if not tensors:
        return False
    if _compiling(torch):
        return True
    define()
    return any(t.requires_grad for t in tensors)


def no_fill_or_out(name: str, fill_value: Any, out: Any) -> None:
    """Refuses what the custom ops do not take: ``out`` (autograd and compiled graphs make
    their own results) and a ``fill_value`` other than the default."""
    if out is not None:
        raise TypeError(f"{name}: out is not taken with autograd or torch.compile; use the result")
    if fill_value is not None:
        raise TypeError(f"{name}: fill_value is not taken with autograd or torch.compile yet; "
                        "bad_indices='fill' fills with the default")


def ndim(x: Any) -> int:
    """The rank of a tensor or of what ``torch.as_tensor`` takes."""
    import torch
    return torch.as_tensor(x).ndim


def _dtype_name(dtype: Any) -> str:
    """A torch dtype's name as the core spells it (``torch.float32`` → ``float32``)."""
    return str(dtype).rpartition(".")[2]


def _fake(name: str, inputs: Sequence[Any], attrs: dict, like: Any) -> Any:
    """An empty tensor of the result's shape and dtype, as the op infers them."""
    import torch
    facts = [(_dtype_name(t.dtype), [int(d) for d in t.shape]) for t in inputs]
    dtype, shape = _core.infer_op(name, facts, attrs)
    if shape is None or any(d is None for d in shape):
        raise ValueError(f"{name}: the result's shape does not follow from the inputs' shapes")
    return like.new_empty(shape, dtype=getattr(torch, dtype) if dtype else like.dtype)


def _numpy(t: Any) -> Any:
    """A CPU tensor's memory as a NumPy array, through DLPack (no copy): the ops' bodies run
    the NumPy path, which never routes back here, even while ``torch.compile`` runs them."""
    from . import _array
    return _array(t.detach())


def _tensor(result: Any) -> Any:
    """The NumPy path's fresh result as a tensor on its memory."""
    import torch
    return torch.from_numpy(result)


def _define(forward_name: str, grad_name: str, attrs: Sequence[tuple[str, str]],
            run: Callable[..., Any], run_grad: Callable[..., Any]) -> Any:
    """Defines ``ndgather::<forward_name>`` and its gradient op ``ndgather::<grad_name>``
    from the eager functions ``run(params, indices, **attrs)`` and
    ``run_grad(params_shape, indices, grad, **attrs)``; ``attrs`` are the op's attributes as
    (schema type, name), in the schema's order. The forward op takes
    ``(params, indices, *attrs)``; the gradient op ``(indices, grad, params_shape, *attrs)``."""
    names = [name for _, name in attrs]
    schema_args = ", ".join(f"{kind} {name}" for kind, name in attrs)

    def forward_body(params: Any, indices: Any, *values: Any) -> Any:
        return _tensor(run(_numpy(params), _numpy(indices), **dict(zip(names, values))))

    def grad_body(indices: Any, upstream: Any, params_shape: Sequence[int],
                  *values: Any) -> Any:
        return _tensor(run_grad(list(params_shape), _numpy(indices), _numpy(upstream),
                                **dict(zip(names, values))))

    import torch

    # CPU kernels only: a tensor on another device finds none, and PyTorch says so.
    forward = torch.library.custom_op(f"ndgather::{forward_name}", forward_body, mutates_args=(),
                                      device_types="cpu",
                                      schema=f"(Tensor params, Tensor indices, {schema_args}) "
                                             "-> Tensor")
    grad = torch.library.custom_op(f"ndgather::{grad_name}", grad_body, mutates_args=(),
                                   device_types="cpu",
                                   schema=f"(Tensor indices, Tensor grad, SymInt[] params_shape, "
                                          f"{schema_args}) -> Tensor")

    @forward.register_fake
    def _(params: Any, indices: Any, *attrs: Any) -> Any:
        return _fake(forward_name, [params, indices], dict(zip(names, attrs)), params)

    @grad.register_fake
    def _(indices: Any, upstream: Any, params_shape: Sequence[int], *attrs: Any) -> Any:
        return upstream.new_empty(list(params_shape))

    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        params, indices, *attrs = inputs
        ctx.save_for_backward(indices)
        ctx.params_shape = list(params.shape)
        ctx.attrs = attrs

    def backward(ctx: Any, upstream: Any) -> tuple:
        (indices,) = ctx.saved_tensors
        dparams = grad(indices, upstream.contiguous(), ctx.params_shape, *ctx.attrs)
        return (dparams, None) + (None,) * len(ctx.attrs)

    forward.register_autograd(backward, setup_context=setup_context)
    return forward


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
            _defined = True


@functools.lru_cache(maxsize=None)
def ops() -> dict:
    """The custom ops, defined on first use: ``{"gather": ..., "gather_nd": ...,
    "take_along_axis": ...}``."""
    import ndgather as ng
    policy = ("str", "bad_indices")
    return {
        "gather": _define("gather", "gather_grad",
                          [("SymInt?", "axis"), ("SymInt", "batch_dims"), policy],
                          ng.gather, ng.gather_grad),
        "gather_nd": _define("gather_nd", "gather_nd_grad", [("SymInt", "batch_dims"), policy],
                             ng.gather_nd, ng.gather_nd_grad),
        "take_along_axis": _define("take_along_axis", "take_along_axis_grad",
                                   [("SymInt", "axis"), policy],
                                   ng.take_along_axis, ng.take_along_axis_grad),
    }


def run(name: str, params: Any, indices: Any, *attrs: Any) -> Any:
    """The custom op ``ndgather::<name>`` on ``params`` and ``indices`` (tensors, or what
    ``torch.as_tensor`` takes), with the op's attributes in its schema's order."""
    import torch
    if not _compiling(torch):
        define()
    if not _defined:
        raise RuntimeError(
            f"{name}: ndgather's PyTorch ops are defined when ndgather is imported after "
            "torch, or by a first call with a tensor outside torch.compile, on PyTorch 2.4 or "
            "newer; import torch first")
    params, indices = torch.as_tensor(params), torch.as_tensor(indices)
    if params.dtype == torch.bfloat16:
        # The bodies read tensors as NumPy arrays through DLPack, which has no bfloat16.
        raise TypeError(f"{name}: bfloat16 tensors are not taken with autograd or "
                        "torch.compile yet (NumPy reads no bfloat16 through DLPack)")
    return getattr(torch.ops.ndgather, name)(params, indices, *attrs)


def flat(x: Any) -> Any:
    """``x`` as a tensor, flattened (``take_along_axis(..., axis=None)``)."""
    import torch
    return torch.as_tensor(x).reshape(-1)

