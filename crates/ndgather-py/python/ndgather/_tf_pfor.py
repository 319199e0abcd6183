"""``NdgatherOp`` under ``tf.vectorized_map`` (issue 55): a ``pfor`` converter, so that a
gather of a batch is one call of the op, not a ``tf.while_loop`` of one call per element.

- ``gather``, ``gather_nd`` and ``take_along_axis`` with the table batched: one call with
  one more batch dimension (their ``batch_dims``, or ``take_along_axis``'s broadcast; an
  unbatched partner tiled), the batching rule of ndgather's JAX and PyTorch ops.
- A gather (``gather``, ``gather_nd``) of batched indices alone from one table, with no
  batch dimensions: one call, whose batch lands at the axis, moved first; a
  ``take_along_axis`` of batched indices from one table: one call, the table broadcast
  against the batch (one more dimension of size 1).
- The rest (the other ops, a table shared by a batched gather with batch dimensions, which
  one call would need tiled, copied whole per element, and inputs of unknown rank):
  TensorFlow's own fallback, a ``tf.while_loop`` of one call per element where
  ``fallback_to_while_loop`` allows it (the default); else an error that says so.

TensorFlow's ``pfor`` converters are registered through its internal module
``tensorflow.python.ops.parallel_for.pfor`` (the public API has no way): where that module
is missing, nothing is registered, and ``tf.vectorized_map`` falls back as for any op.
"""

from __future__ import annotations

from typing import Any

from . import _batching, _core


def register() -> None:
    """Registers the converter, once per process (with the op library)."""
    try:
        from tensorflow.python.ops.parallel_for import pfor
    except ImportError:
        return
    pfor.RegisterPFor("NdgatherOp")(_convert)


def _convert(pfor_input: Any) -> Any:
    import tensorflow as tf
    from tensorflow.python.ops.parallel_for import pfor

    from . import _tf
    name = pfor_input.get_attr("op").decode()
    arity = list(pfor_input.get_attr("arity"))
    names = [n.decode() for n in pfor_input.get_attr("attr_names")]
    attrs = _core.text_attrs(name, names, [v.decode() for v in
                                           pfor_input.get_attr("attr_values")])
    # (An unknown rank: the rule cannot move an axis, nor check a negative one against the
    # element's rank, which the batch would shift.)
    known = all(x.shape.rank is not None for x, _, _ in pfor_input.inputs)
    kind = None
    if arity == [1, 1] and known:
        params = pfor_input.input(0)
        kind, changes, out_axis = _batching.plan(name, attrs, params[1], params[0].shape.rank)
    if kind in (None, "tiled"):
        if not pfor_input.pfor._fallback_to_while_loop:
            raise ValueError(f"No pfor vectorization defined for NdgatherOp ({name}): "
                             "ndgather batches a gather of a batched table, or of batched "
                             "indices alone; pass fallback_to_while_loop=True for a loop")
        return pfor._fallback_converter(pfor_input, root_cause=f"ndgather's {name}")
    attrs.update(changes)
    if kind == "indices":
        out = _tf.run(name, [pfor_input.unstacked_input(0), pfor_input.stacked_input(1)],
                      attrs)
        return pfor.wrap(_first(out, out_axis), True)
    if kind == "broadcast":
        params = tf.expand_dims(pfor_input.unstacked_input(0), 0)
        return pfor.wrap(_tf.run(name, [params, pfor_input.stacked_input(1)], attrs), True)
    pfor_input.stack_inputs([1])
    return pfor.wrap(_tf.run(name, [pfor_input.stacked_input(0), pfor_input.stacked_input(1)],
                             attrs), True)


def _first(x: Any, axis: int) -> Any:
    """``x`` with its dimension ``axis`` moved first."""
    import tensorflow as tf
    if axis == 0:
        return x
    rank = x.shape.rank
    return tf.transpose(x, [axis, *range(axis), *range(axis + 1, rank)])
