"""Which framework stages an op on given values as its own op, where ndgather cannot read
them itself: JAX inside its transformations (a tracer has no memory), and TensorFlow for
its tensors (a graph's have none, and a gradient needs TensorFlow's own op). Each such
module (``_jax``, ``_tf``) offers ``run``, ``asarray``, ``dtype``, ``shards`` and
``no_out``."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Optional

from . import _jax, _tf


def framework(*values: Any) -> Optional[ModuleType]:
    """The module of the framework whose op must take ``values``, or ``None`` for ndgather's
    own call."""
    if "jax" in sys.modules and _jax.traced(*values):
        return _jax
    if "tensorflow" in sys.modules and _tf.wanted(*values):
        return _tf
    return None
