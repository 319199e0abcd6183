"""The batching rule of the gathers, one for every framework's batching transform (JAX's
``vmap``, PyTorch's ``torch.func.vmap``, TensorFlow's ``tf.vectorized_map``): how a batch
of ``gather``, ``gather_nd`` or ``take_along_axis`` calls runs as one call of the op.

Only the attributes that a batch moves change: ``batch_dims`` one more where it counts
from the front (a negative one counts from the indices' end, which the batch leaves in
place), and a given axis one more where it counts from the front.
"""

from __future__ import annotations

from typing import Optional

#: The ops whose batch is the op itself over one more batch dimension; the others run once
#: per element.
BATCHABLE = ("gather", "gather_nd", "take_along_axis")


def plan(name: str, attrs: dict, params_batched: bool, params_rank: int) -> tuple:
    """``(kind, changes, out_axis)`` for a batch of the op ``name`` with attributes
    ``attrs`` (their values, as the op reads them), the batch first in each batched input:

    - ``"batched"``: the table is batched; the indices too (broadcast where not), with the
      attributes ``changes``; the batch lands first.
    - ``"indices"``: a gather of batched indices alone from one table, with no batch
      dimensions: the call as it is, whose batch lands at ``out_axis``.
    - ``"broadcast"``: ``take_along_axis`` of batched indices from one table, given one
      more dimension of size 1 (no copy), with ``changes``; the batch lands first.
    - ``"tiled"``: one call would need the table broadcast to the batch (copied whole by a
      kernel that reads it row-major), with ``changes``; a framework may loop instead.
    - ``None`` for an op with no rule of its own: once per element.
    """
    if name not in BATCHABLE:
        return None, {}, 0
    batch_dims = attrs.get("batch_dims") or 0
    axis: Optional[int] = attrs.get("axis")
    if name == "take_along_axis" and axis is None:
        raise ValueError("ndgather: take_along_axis: batched, it needs an axis")
    changes = {}
    if axis is not None and axis >= 0:
        changes["axis"] = axis + 1
    if name == "take_along_axis":
        return ("batched" if params_batched else "broadcast"), changes, 0
    if not params_batched and batch_dims == 0:
        at = 0 if name == "gather_nd" else (0 if axis is None else axis) % max(params_rank, 1)
        return "indices", {}, at
    if batch_dims >= 0:
        changes["batch_dims"] = batch_dims + 1
    return ("batched" if params_batched else "tiled"), changes, 0
