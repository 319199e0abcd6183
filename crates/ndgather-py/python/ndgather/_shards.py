"""An op's inputs as the staged calls (``_jax``, ``_tf``) group them: one tensor per input,
or for a list input (an embedding table's shards) the tensors of a :class:`Shards`. A plain
Python list is one tensor (indices written as ``[2, 0]``)."""

from __future__ import annotations

from typing import Any, Sequence


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
