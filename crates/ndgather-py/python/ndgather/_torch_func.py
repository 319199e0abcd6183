"""ndgather's ops under PyTorch's function transforms, ``torch.func`` (``vmap``, ``grad``,
``vjp``, ``jacrev`` and their compositions): a call whose tensors a transform wraps runs the
op's typed op, ``ndgather::<op>.native`` (see ``_torch``), inside an ``autograd.Function``
that ``torch.func`` can transform, whose backward is the typed gradient op
``ndgather::<op>.grad``.

- ``vmap`` of either op is its batching rule (``torch.library.register_vmap``): for
  ``gather``, ``gather_nd`` and ``take_along_axis`` and their gradients, one call with one
  more batch dimension (their ``batch_dims``, or ``take_along_axis``'s broadcast), as in
  ndgather's JAX rule, where the table is batched, or where batched indices alone need no
  copy of it; else, and for the other ops, one call per element of the batch, stacked.
- ``grad`` and the other reverse-mode transforms record the function, whose ``vmap`` rule
  PyTorch generates from those of its ops (``generate_vmap_rule``): per-sample gradients,
  ``vmap(grad(f))``, batch the gradient op.
- Forward mode (``jvp``, ``jacfwd``, and forward AD's dual tensors) runs the op on the
  tangents, where the registry says the op is linear in the inputs they reach
  (``_core.op_linear``: a gather in its table, a sum in its data), or, where the op is
  routed (``_core.op_routed``: a max, a min, a product), the linear op along its routes on
  the tangents times the op's gradient for ones, or, where it is linear in groups apart
  (``_core.op_multilinear``: a bag's table and ``per_sample_weights``), the sum of the
  op's tangent on each; elsewhere (a ``max_norm``) the function's ``jvp`` raises. A
  backward that is
  differentiated again (``hessian``, ``grad`` of ``grad``) runs the gradient through a
  function of its own, where the op is linear in every input with a gradient.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Optional, Sequence

from . import _batching, _core, _staged_call
from ._torch import _split



def kinds() -> tuple:
    """Whether the transforms that run now include a gradient's (``grad``, ``vjp``,
    ``jacrev``) and forward mode's (``jvp``, ``jacfwd``)."""
    from torch._C._functorch import TransformType
    from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters
    found = {i.key() for i in retrieve_all_functorch_interpreters()}
    return TransformType.Grad in found, TransformType.Jvp in found


def call(name: str, typed: Sequence[Any], attrs: str, kinds: tuple) -> Any:
    """The op ``name`` on its typed inputs (a tensor, ``None`` or a list each) under the
    transforms of ``torch.func`` that :func:`kinds` gave: where a gradient may flow (grad
    mode on and an input that requires grad at any level of its wrapping, or a gradient's
    or forward mode's transform around), through the function, its tensors flat so that it
    sees each; else the typed op itself (``vmap`` alone, whose machinery for a function
    costs ten times the op's call)."""
    import torch
    flat, arity = _flattened(typed)
    if any(kinds) or torch.is_grad_enabled() and any(requires_grad(torch, t) for t in flat):
        compiling = torch.compiler.is_compiling()
        if compiling and kinds[1]:
            raise RuntimeError(_NO_FORWARD.format(name))
        try:
            # (torch.compile traces no function that defines a jvp: there, one without.)
            return _FUNCTION[int(compiling)].apply(name, attrs, arity, *flat)
        except ValueError as e:
            if not kinds[1] or "treespec" not in str(e):
                raise
            # (PyTorch's generated batching rule of the function's jvp fails before calling
            # it, on its own pytree, where jvp maps a vmap: the tangent reached the op.)
            raise RuntimeError(_NO_FORWARD.format(name)) from e
    return _typed(name, "native")(*typed, attrs)


def requires_grad(torch: Any, t: Any) -> bool:
    """Whether ``t``, or a tensor that it wraps, requires grad: a ``vmap`` of a tensor that
    requires grad answers False for itself."""
    functorch = torch._C._functorch
    while not t.requires_grad and functorch.is_functorch_wrapped_tensor(t):
        t = functorch.get_unwrapped(t)
    return t.requires_grad


def _flattened(typed: Sequence[Any]) -> tuple:
    """Typed arguments' tensors, flat, and what :func:`_regrouped` needs to group them.
    (Not ``_torch``'s ``_flat`` and ``_groups``: ``torch.compile`` traces these, and those
    read the registry's signatures through the core, which it cannot trace.)"""
    flat, arity = [], []
    for x in typed:
        is_list = isinstance(x, (list, tuple))
        part = list(x) if is_list else [] if x is None else [x]
        flat += part
        arity.append(f"{'l' if is_list else 't'}{len(part)}")
    return flat, ",".join(arity)


def _arities(arity: str) -> list:
    """Each input's ``(is_list, count)`` from :func:`_flattened`'s text. (Text, not a tuple:
    PyTorch's generated batching rule of a function's ``jvp`` flattens a tuple argument and
    then fails to rebuild it.)"""
    return [(part[0] == "l", int(part[1:])) for part in arity.split(",") if part]


def _regrouped(tensors: Sequence[Any], arity: str) -> list:
    """The flat tensors as the typed op's inputs: ``arity`` says, for each, whether it is a
    list, and of how many tensors."""
    out, at = [], 0
    for is_list, count in _arities(arity):
        part = list(tensors[at:at + count])
        at += count
        out.append(part if is_list else (part[0] if part else None))
    return out


_NO_FORWARD = ("ndgather: {}: forward-mode AD (jvp) is not implemented for its ops; use "
               "reverse mode (backward)")
_NOT_LINEAR = ("ndgather: {}: forward-mode AD (jvp) is not implemented where a tangent "
               "reaches {}: " + _staged_call.NOT_ROUTED + ", and ndgather computes a "
               "forward derivative only where it is; use reverse mode (backward)")

#: The ``autograd.Function`` that the transforms see, defined with the ops (not on a call,
#: which ``torch.compile`` may trace, and a class definition it cannot): eagerly one with a
#: ``jvp`` (forward mode), and for ``torch.compile`` one without (it traces none); the
#: function that refuses a derivative of the Python kernels' gradient; and the gradient's
#: own function, for second derivatives.
_FUNCTION: list = []
_NO_DERIVATIVE: list = []
_GRAD_FUNCTION: list = []

#: What the function's gradient needs of the core, read with the ops, as ``torch.compile``
#: can trace its reads (not a call into the core): the ops whose gradient reads their
#: output, and the dtypes with a gradient.
_READS_OUTPUT: dict = {}
_GRAD_DTYPES: set = set()


def _function(forward_mode: bool) -> Any:
    import torch

    class NdgatherOp(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(name: str, attrs: str, arity: str, *tensors: Any) -> Any:
            return _typed(name, "native")(*_regrouped(tensors, arity), attrs)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            name, attrs, arity, *tensors = inputs
            # The output only where the gradient reads it, as the eager formula keeps it.
            reads = _READS_OUTPUT[name]
            ctx.save_for_backward(*tensors, *([output] if reads else []))
            # (A max's, a min's or a product's forward derivative reads the output too.)
            ctx.save_for_forward(*tensors, *([output] if reads else []))
            # (An input with no tangent then has None for one, not zeros, which jvp would
            # take for a tangent that reached it.)
            ctx.set_materialize_grads(False)
            ctx.call = (name, attrs, arity, reads)

        @staticmethod
        def backward(ctx: Any, upstream: Any) -> tuple:
            name, attrs, arity, reads = ctx.call
            given = ctx.saved_tensors
            if upstream is None:  # (no gradient reached the output: none for the inputs)
                return (None, None, None, *[None] * (len(given) - reads))
            from ._torch import _dual
            # Forward AD's tangents of the gradient, where a backward runs inside a dual
            # level on duals (forward over reverse outside torch.func): through the
            # gradient's function, which has a jvp, or refused; never dropped.
            dual = _dual(torch, [*given, upstream])
            if dual and not _grads_linear(name, attrs, arity, given[:len(given) - reads]):
                raise RuntimeError(_NOT_LINEAR_GRAD.format(name))
            saved = given if dual else _primals(given)
            tensors = saved[:-1] if reads else saved
            upstream = upstream if dual else _primals([upstream])[0]
            output = saved[-1] if reads else upstream
            if not torch.compiler.is_compiling() and (dual or _differentiated(
                    upstream, tensors)) and _grads_linear(name, attrs, arity, tensors):
                # A second derivative (hessian, grad of grad): the gradient through its own
                # function. (An output never read: an empty tensor, no tangent of its own.)
                grads = iter(_GRAD_FUNCTION[0].apply(
                    name, attrs, arity, *tensors, output if reads else upstream.new_empty(0),
                    upstream))
            else:
                grads = iter(_gradient(name, [*_regrouped(tensors, arity), output, upstream],
                                       attrs))
            per_input = [next(grads) if t.dtype in _GRAD_DTYPES else None for t in tensors]
            needs = ctx.needs_input_grad[3:]
            return (None, None, None,
                    *(g if need else None for g, need in zip(per_input, needs)))

    if forward_mode:
        def jvp(ctx: Any, *tangents: Any) -> Any:
            # (Called only where a tangent reaches the op.)
            name, attrs, arity, reads = ctx.call
            saved = ctx.saved_tensors
            tensors = saved[:-1] if reads else saved
            with _forward_ad_on():
                if _route(name, attrs) is not None:
                    return _routed(name, attrs, arity, tensors, saved[-1], tangents[3:])
                return _tangent(name, attrs, arity, tensors, tangents[3:])
        NdgatherOp.jvp = staticmethod(jvp)
    return NdgatherOp


#: The refusal of a derivative of the gradient where the op is not linear in every input
#: with a gradient (the C++ kernel of ``<op>.grad`` says the same).
_NOT_LINEAR_GRAD = ("derivative for ndgather::{} is not implemented: ndgather differentiates "
                    "a gradient where the op is linear in every input with a gradient (a "
                    "gather, a sum, a scatter add), not a max, a min, a product, a scatter "
                    "update or weighted bags")


#: The refusal of a second level of forward mode around a weighted bag's tangent in both
#: its table and its weights: each term runs with forward AD off.
_OUTER_FORWARD = ("ndgather: {}: forward-mode AD (jvp) with tangents in both the table and "
                  "per_sample_weights is not implemented inside another level of forward "
                  "mode (jvp of jvp, jacfwd of jacfwd): each term reads the other's values "
                  "with this level's tangents set aside, and would set aside the outer "
                  "level's too; give one of them a tangent at a time, or use reverse mode")


def _forward_ad_on() -> Any:
    """A context with forward AD on: PyTorch runs a function's ``jvp`` with it off, so that
    the op on a tangent that has a tangent of its own, at an outer level of forward mode
    (``jvp`` of ``jvp`` with a tangent that depends on the point, third derivatives), would
    drop that one; on, the outer level records the op."""
    import torch
    return torch.autograd.forward_ad._set_fwd_grad_enabled(True)


def _primals(tensors: Sequence[Any]) -> list:
    """The tensors without forward AD's tangents, for the gradient op (whose kernel has no
    forward derivative): a backward run inside a ``dual_level`` gets the duals it saved."""
    import torch
    forward_ad = torch.autograd.forward_ad
    if forward_ad._current_level < 0:
        return list(tensors)
    functorch = torch._C._functorch
    return [t if functorch.is_functorch_wrapped_tensor(t) else forward_ad.unpack_dual(t).primal
            for t in tensors]


def _tangent(name: str, attrs: str, arity: str, tensors: Sequence[Any],
             tangents: Sequence[Any]) -> Any:
    """The output's tangent: the op, with its tangent attributes, on the tangents of the
    inputs it is linear in (zeros for one that has none), the others as they are; refused
    where a tangent reaches an input that it is not linear in."""
    import torch
    positions, tangent_attrs, _ = _linear(name, attrs)
    counts = [n for _, n in _arities(arity)]
    groups = _multilinear(name, attrs)
    try:
        # By the product rule where the op is linear in groups apart: each group's term.
        terms = _staged_call.multilinear_terms(groups, counts, tensors, tangents,
                                               torch.zeros_like) if groups else [
            (tangent_attrs, _staged_call.tangent_inputs(positions, counts, tensors, tangents,
                                                        torch.zeros_like))]
    except _staged_call.NotLinear as e:
        where = _staged_call.input_name(name, e.position)
        raise RuntimeError(_NOT_LINEAR.format(name, where)) from None
    if len(terms) > 1:
        return _product_rule(name, arity, terms)
    (term_attrs, given), = terms
    if _differentiated_again(given):
        # Through the function: an outer level of forward mode, or a gradient,
        # differentiates it in turn.
        return _FUNCTION[0].apply(name, term_attrs, arity, *given)
    return _typed(name, "native")(*_regrouped(given, arity), term_attrs)


def _product_rule(name: str, arity: str, terms: Sequence[tuple]) -> Any:
    """The sum of a multilinear op's terms where tangents reach two groups: each holds the
    other group's inputs, which carry this level's tangents too, so it runs with forward AD
    off (their values, not their tangents). An outer level of forward mode would be dropped
    with them: refused. A gradient still records each term, through the function."""
    import torch
    from torch._C._functorch import TransformType
    from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters
    if [i.key() for i in retrieve_all_functorch_interpreters()].count(TransformType.Jvp) > 1:
        raise RuntimeError(_OUTER_FORWARD.format(name))
    out = None
    with torch.autograd.forward_ad._set_fwd_grad_enabled(False):
        for term_attrs, given in terms:
            if any(requires_grad(torch, t) for t in given):
                term = _FUNCTION[0].apply(name, term_attrs, arity, *given)
            else:
                term = _typed(name, "native")(*_regrouped(given, arity), term_attrs)
            out = term if out is None else out + term
    return out


@functools.lru_cache(maxsize=None)
def _route(name: str, attrs: str) -> Optional[tuple]:
    """Where the op with ``attrs`` is routed (the registry's fact, ``_core.op_routed``: a
    max, a min, a product): the linear op, its attributes' string, and the positions of the
    inputs whose tangents it takes."""
    names, texts = _split(attrs)
    fact = _core.op_routed(name, _core.text_attrs(name, names, texts))
    if fact is None:
        return None
    op, over, positions, constant = fact
    given = _staged_call.texts_over(name, names, texts, over)
    return op, ";".join(f"{k}={v}" for k, v in given.items()), frozenset(positions), constant


@functools.lru_cache(maxsize=None)
def _multilinear(name: str, attrs: str) -> tuple:
    """Where the op with ``attrs`` is linear in groups of inputs apart (the registry's fact,
    ``_core.op_multilinear``: a weighted bag's table and weights): each group's positions
    and its tangent's attributes' string; none where it is not."""
    names, texts = _split(attrs)
    groups = _core.op_multilinear(name, _core.text_attrs(name, names, texts))
    return tuple((frozenset(p), ";".join(
        f"{k}={v}" for k, v in _staged_call.texts_over(name, names, texts, over).items()))
        for p, over in groups)


def _routed(name: str, attrs: str, arity: str, tensors: Sequence[Any], output: Any,
            tangents: Sequence[Any]) -> Any:
    """A routed op's tangent: the linear op along its routes, on each tangent times the
    op's gradient for an upstream of ones (zero where that is zero, whatever the tangent).
    The factors are read with forward AD off, as the tangents are not theirs. A max's and a
    min's are constant, their derivative zero: detached. A product's derivative through
    them is refused, an outer level of forward mode here and a gradient by the gradient
    op's autograd kernel (or the Python kernels' function)."""
    import torch
    from torch._C._functorch import TransformType
    from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters
    op, route_attrs, positions, constant = _route(name, attrs)
    levels = [i.key() for i in retrieve_all_functorch_interpreters()]
    if not constant and levels.count(TransformType.Jvp) > 1:
        raise RuntimeError(_NOT_LINEAR_GRAD.format(name))
    with torch.autograd.forward_ad._set_fwd_grad_enabled(False):
        factors = iter(_gradient(name, [*_regrouped(tensors, arity), output,
                                        torch.ones_like(output)], attrs))
    per_tensor = [next(factors) if t.dtype in _GRAD_DTYPES else None for t in tensors]
    if constant:
        per_tensor = [None if f is None else f.detach() for f in per_tensor]
    try:
        given = _staged_call.routed_inputs(
            positions, [n for _, n in _arities(arity)], tensors, tangents, per_tensor,
            torch.zeros_like, lambda m, t: torch.where(m == 0, torch.zeros_like(t), m * t),
            lambda x: x.is_complex())
    except _staged_call.NotLinear as e:
        where = _staged_call.input_name(name, e.position)
        raise RuntimeError(_NOT_LINEAR.format(name, where)) from None
    except _staged_call.Complex as e:
        where = _staged_call.input_name(name, e.position)
        raise RuntimeError(f"ndgather: {name}: forward-mode AD (jvp) is not implemented for "
                           f"complex {where}: ndgather computes a max's, a min's or a "
                           "product's forward derivative for real inputs; use reverse mode "
                           "(backward)") from None
    if _differentiated_again(given):
        return _FUNCTION[0].apply(op, route_attrs, arity, *given)
    return _typed(op, "native")(*_regrouped(given, arity), route_attrs)


def _differentiated_again(tensors: Sequence[Any]) -> bool:
    """Whether an op on ``tensors`` inside a ``jvp`` or a backward is differentiated in turn:
    two levels of forward mode, a gradient's level, or a tensor that requires grad."""
    import torch
    from torch._C._functorch import TransformType
    from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters
    keys = [i.key() for i in retrieve_all_functorch_interpreters()]
    if keys.count(TransformType.Jvp) > 1 or TransformType.Grad in keys:
        return True
    return any(requires_grad(torch, t) for t in tensors)


@functools.lru_cache(maxsize=None)
def _linear(name: str, attrs: str) -> tuple:
    """Where the op with ``attrs`` is linear (the registry's fact): the positions of those
    inputs (none where it is not), the attributes' string of its tangent's op, and whether
    its gradient is that op's transpose."""
    names, texts = _split(attrs)
    fact = _core.op_linear(name, _core.text_attrs(name, names, texts))
    if fact is None:
        return frozenset(), attrs, False
    positions, tangent_attrs, adjoint = fact
    given = _staged_call.texts_over(name, names, texts, tangent_attrs)
    return frozenset(positions), ";".join(f"{k}={v}" for k, v in given.items()), adjoint


def _differentiated(upstream: Any, tensors: Sequence[Any]) -> bool:
    """Whether a backward's result is differentiated again: forward mode around it
    (``hessian``, ``jacfwd`` of ``jacrev``), or tensors that require grad at two levels of
    ``torch.func``'s wrapping between them (``grad`` of ``grad``; the upstream gradient at
    the outer level alone, as in a gradient penalty), not at the one level of the gradient
    taken (``grad``, per-sample gradients)."""
    import torch
    if kinds()[1]:
        return True
    functorch = torch._C._functorch
    levels = set()
    for t in (upstream, *tensors):
        while True:
            wrapped = functorch.is_functorch_wrapped_tensor(t)
            if t.requires_grad:
                levels.add(functorch.maybe_get_level(t) if wrapped else None)
            if len(levels) > 1:
                return True
            if not wrapped:
                break
            t = functorch.get_unwrapped(t)
    return False


def _grads_linear(name: str, attrs: str, arity: str, tensors: Sequence[Any]) -> bool:
    """Whether the op is linear in every input that has a gradient, its gradient the
    transpose of its tangent: the gradient is then linear in the upstream gradient and reads
    none of their values, and has a derivative, :data:`_GRAD_FUNCTION`'s."""
    positions, _, adjoint = _linear(name, attrs)
    owners = _staged_call.owners([n for _, n in _arities(arity)])
    return adjoint and all(k in positions for t, k in zip(tensors, owners)
                           if t.dtype in _GRAD_DTYPES)


def _gradient(name: str, typed: list, attrs: str) -> list:
    """The typed gradient op on its arguments. Where its kernels are Python's and a gradient
    of it is asked for (a second derivative, or ``torch.func.grad``'s graph of the first),
    through a function whose backward raises: the op has no derivative, and the Python
    kernels' autograd kernel (``register_autograd``'s) is not one that the transforms can
    run. (The C++ library's is PyTorch's C++ fallback, which they can.)"""
    import torch

    from . import _torch
    if not _torch._native and torch.is_grad_enabled():
        flat, arity = _flattened(typed)
        if any(requires_grad(torch, t) for t in flat):
            return list(_NO_DERIVATIVE[0].apply(name, attrs, arity, *flat))
    return _typed(name, "grad")(*typed, attrs)


def _grad_function() -> Any:
    """The gradient of an op linear in every input with one (:func:`_grads_linear`), as a
    function that the transforms differentiate: forward mode (``hessian``, ``jacfwd`` of
    ``jacrev``) runs the gradient op on the upstream gradient's tangent, reverse mode
    (``grad`` of ``grad``) the op's tangent on the cotangents; the inputs' values, which
    it does not read, have no derivative."""
    import torch

    class NdgatherGrad(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(name: str, attrs: str, arity: str, *tensors: Any) -> tuple:
            *inputs, output, upstream = tensors
            return tuple(_typed(name, "grad")(*_regrouped(inputs, arity), output, upstream,
                                              attrs))

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            name, attrs, arity, *tensors = inputs
            ctx.save_for_forward(*tensors)
            ctx.save_for_backward(*tensors)
            ctx.call = (name, attrs, arity)

        @staticmethod
        def jvp(ctx: Any, *tangents: Any) -> tuple:
            name, attrs, arity = ctx.call
            *inputs, output, upstream = ctx.saved_tensors
            if tangents[-1] is None:
                grads = NdgatherGrad.forward(name, attrs, arity, *inputs, output, upstream)
                return tuple(torch.zeros_like(g) for g in grads)
            # Through the function again, so that an outer level of forward mode
            # differentiates it; its inputs' values, which it does not read, detached (their
            # tangent at this level would call this jvp again).
            with _forward_ad_on():
                return tuple(NdgatherGrad.apply(name, attrs, arity,
                                                *(t.detach() for t in (*inputs, output)),
                                                tangents[-1]))

        @staticmethod
        def backward(ctx: Any, *cotangents: Any) -> tuple:
            name, attrs, arity = ctx.call
            *inputs, _, _ = ctx.saved_tensors
            with_grad = iter(cotangents)
            tangents = [next(with_grad) if t.dtype in _GRAD_DTYPES else None for t in inputs]
            up = _tangent(name, attrs, arity, inputs, tangents)
            return (None, None, None, *[None] * (len(inputs) + 1), up)

    return NdgatherGrad


def _no_derivative_function() -> Any:
    import torch

    class NoDerivative(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(name: str, attrs: str, arity: str, *tensors: Any) -> tuple:
            with torch._C._AutoDispatchBelowAutograd():
                return tuple(_typed(name, "grad")(*_regrouped(tensors, arity), attrs))

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            ctx.name = inputs[0]

        @staticmethod
        def backward(ctx: Any, *upstream: Any) -> tuple:
            raise RuntimeError(f"derivative for ndgather::{ctx.name} is not implemented")

    return NoDerivative


def _typed(name: str, role: str) -> Any:
    return getattr(getattr(sys.modules["torch"].ops.ndgather, name), role)


def register(torch: Any, name: str, roles: Sequence[str]) -> None:
    """The typed ops' batching rules, for ``torch.vmap``, and the function, once."""
    if not _FUNCTION:
        _FUNCTION.extend([_function(True), _function(False)])
        _NO_DERIVATIVE.append(_no_derivative_function())
        _GRAD_FUNCTION.append(_grad_function())
        _GRAD_DTYPES.update(getattr(torch, n) for n in _staged_call.grad_dtypes()
                            if isinstance(getattr(torch, n, None), torch.dtype))
    _READS_OUTPUT[name] = _core.grad_reads_output(name)
    for role in roles:
        rule = _batched if name in _batching.BATCHABLE else _mapped
        torch.library.register_vmap(f"ndgather::{name}.{role}",
                                    functools.partial(rule, name, role))


def register_generic(op: Any, grad: Any) -> None:
    """The batching rules of the ops that run any op by name, ``ndgather::op`` and
    ``ndgather::op_grad`` (a program that ``torch.export`` saves calls them): once per
    element."""
    for generic in (op, grad):
        generic.register_vmap(functools.partial(_generic_mapped, generic))


def _generic_mapped(op: Any, info: Any, in_dims: tuple, *args: Any) -> tuple:
    return _per_element(args[-2], op, info, in_dims, args)


def _mapped(name: str, role: str, info: Any, in_dims: tuple, *args: Any) -> tuple:
    return _per_element(name, _typed(name, role), info, in_dims, args)


def _per_element(name: str, op: Any, info: Any, in_dims: tuple, args: tuple) -> tuple:
    """The op once per element of the batch, its results stacked: the rule of the ops
    without one of their own (each element's result may differ in shape; where it does the
    batch cannot stack, and the error says so)."""
    import torch

    def element(x: Any, d: Any, b: int) -> Any:
        if isinstance(x, (list, tuple)):
            return [element(t, e, b) for t, e in zip(x, d)]
        return x if d is None else x.select(d, b)

    if info.batch_size == 0:
        return _empty(name, op, in_dims, args)
    results = [op(*(element(x, d, b) for x, d in zip(args, in_dims)))
               for b in range(info.batch_size)]
    if isinstance(results[0], torch.Tensor):
        return _stacked(name, results), 0
    columns = [_stacked(name, list(c)) for c in zip(*results)]
    return columns, [0] * len(columns)


def _empty(name: str, op: Any, in_dims: tuple, args: tuple) -> tuple:
    """An empty batch's result: the op's shape inference (its fake, on ``meta`` tensors of
    an element's shape), with none of the batch. (A shape that values give has none.)"""
    import torch

    def element(x: Any, d: Any) -> Any:
        if isinstance(x, (list, tuple)):
            return [element(t, e) for t, e in zip(x, d)]
        if not isinstance(x, torch.Tensor):
            return x
        shape = list(x.shape)
        if d is not None:
            del shape[d]
        return torch.empty(shape, dtype=x.dtype, device="meta")

    try:
        out = op(*(element(x, d) for x, d in zip(args, in_dims)))
    except Exception as e:  # a size of the values': the fake needs a FakeTensorMode's context
        raise RuntimeError(f"ndgather: {name}: vmap over an empty batch, of an op whose result "
                           "shape its values give") from e

    def batch(t: Any) -> Any:
        return torch.empty((0, *t.shape), dtype=t.dtype)
    if isinstance(out, torch.Tensor):
        return batch(out), 0
    return [batch(t) for t in out], [0] * len(out)


def _stacked(name: str, results: list) -> Any:
    import torch
    shapes = {tuple(r.shape) for r in results}
    if len(shapes) > 1:
        first, other = sorted(shapes)[:2]
        raise RuntimeError(f"ndgather: {name}: under vmap the batch's elements give results "
                           f"of different shapes ({list(first)} and {list(other)}), which "
                           "one tensor cannot hold; map over the batch in a loop instead")
    return torch.stack(results)


def _batched(name: str, role: str, info: Any, in_dims: tuple, *args: Any) -> tuple:
    """A gather of a batch (or its gradient) as one call where ``_batching.plan`` gives
    one that needs no copy of the table; else once per element, each call reading the
    table in place."""
    *tensors, attrs = args
    dims = in_dims[:-1]
    names, texts = _split(attrs)
    # (The op's own reading of its attributes: errors in its words.)
    kind, changes, out_axis = _batching.plan(name, _core.text_attrs(name, names, texts),
                                             dims[0] is not None, tensors[0].dim())
    if kind == "tiled" or role == "grad" and kind != "batched":
        return _mapped(name, role, info, in_dims, *args)
    op = _typed(name, role)
    given = {**dict(zip(names, texts)), **{k: str(v) for k, v in changes.items()}}
    text = ";".join(f"{k}={v}" for k, v in given.items())
    if kind == "indices":
        return op(tensors[0], tensors[1].movedim(dims[1], 0), attrs), out_axis
    if kind == "broadcast":
        return op(tensors[0].unsqueeze(0), tensors[1].movedim(dims[1], 0), text), 0
    out = op(*(_leading(t, d, info.batch_size) for t, d in zip(tensors, dims)), text)
    return (out, [0] * len(out)) if role == "grad" else (out, 0)


def _leading(x: Any, dim: Optional[int], size: int) -> Any:
    """``x`` with the batch first: moved there, or broadcast for an unbatched partner."""
    if dim is None:
        return x.expand(size, *x.shape)
    return x.movedim(dim, 0)
