"""What the staged calls (``_jax``, ``_tf``) share: an op's inputs grouped as its signature
takes them (one tensor per input, or for a list input, such as an embedding table's shards,
the tensors of a :class:`Shards`; a plain Python list is one tensor, indices written as
``[2, 0]``), and the core's dtypes with a gradient."""

from __future__ import annotations

import functools
from typing import Any, Sequence

from . import _core


class Shards(list):
    """The tensors of one list input: an embedding table's shards."""


def shards(params: Any) -> Shards:
    """An embedding table's shards: the list given, or the one table."""
    return Shards(params) if isinstance(params, (list, tuple)) else Shards([params])


def groups(inputs: Sequence[Any]) -> list:
    """The tensors of each input: none for one left out (``None``), a list input's shards,
    else the one tensor."""
    return [[] if x is None else list(x) if isinstance(x, Shards) else [x] for x in inputs]


def any_of(values: Sequence[Any], kinds: Any) -> bool:
    """Whether any of ``values``, or of the lists among them, is an instance of ``kinds``."""
    for v in values:
        if isinstance(v, kinds):
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(x, kinds) for x in v):
            return True
    return False


@functools.lru_cache(maxsize=None)
def grad_dtypes() -> frozenset:
    """The names of the dtypes with a gradient in the core (the dtype table's grad role): the
    inputs whose gradient a gradient call writes, one result each."""
    return frozenset(_core.grad_dtypes())
