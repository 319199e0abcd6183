"""Which framework stages an op on given values as its own op, where ndgather cannot read
them itself: JAX inside its transformations (a tracer has no memory), and TensorFlow for
its tensors (a graph's have none, and a gradient needs TensorFlow's own op), and PyTorch's
custom ops for tensors that autograd or ``torch.compile`` must see. Each such module
(``_jax``, ``_tf``, ``_torch``) offers ``run``, ``asarray``, ``astype``, ``dtype``, ``fill``,
``flat``, ``shards`` and ``no_out``."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Optional

from . import _jax, _tf, _torch


def framework(*values: Any) -> Optional[ModuleType]:
    """The module of the framework whose op must take ``values``, or ``None`` for ndgather's
    own call."""
    if "jax" in sys.modules and _jax.traced(*values):
        return _jax
    return readable(*values)


def readable(*values: Any) -> Optional[ModuleType]:
    """:func:`framework` for values whose memory a call could read (no JAX tracer): the
    frameworks that must be asked before ndgather's own call, which would read a TensorFlow
    graph's tensor or be traced by ``torch.compile``. One lookup each where they are not
    imported."""
    if "tensorflow" in sys.modules and _tf.wanted(*values):
        return _tf
    if "torch" in sys.modules and _torch.wanted(*values):
        return _torch
    return None
