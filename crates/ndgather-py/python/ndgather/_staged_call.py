"""What the staged calls (``_jax``, ``_tf``, ``_torch``) share: an op's inputs grouped as
its signature takes them (one tensor per input, or for a list input, such as an embedding
table's shards, the tensors of a :class:`Shards`; a plain Python list is one tensor, indices
written as ``[2, 0]``), attributes as the text the core reads (TensorFlow's and PyTorch's ops
carry them as strings), and the core's dtypes with a gradient."""

from __future__ import annotations

import functools
import operator
import sys
from typing import Any, Optional, Sequence

import numpy as np

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


def input_name(name: str, position: int) -> str:
    """The name of the op ``name``'s input at ``position`` in its signature."""
    for op, _, inputs, _ in _core.op_signatures():
        if op == name:
            return inputs[position][0]
    return f"input {position}"


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


def no_grad(name: str) -> str:
    """The message for an op without a gradient in the core, naming those with one (the
    registry's answer, not a list kept here)."""
    with_one = [op[0] for op in _core.op_signatures() if _core.op_has_grad(op[0])]
    return f"{name} has no gradient in ndgather (the ops with one: {', '.join(with_one)})"


def plain(name: str, attr: str, value: Any) -> Any:
    """An attribute's value as Python holds it: a TensorFlow tensor read where eager (a
    graph's tensor cannot be), a NumPy array as its item or list."""
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(value, (tf.Tensor, tf.Variable)):
        if not hasattr(value, "numpy"):
            raise TypeError(
                f"{name}: {attr} must be known when the op is built: ndgather's {attr} is an "
                "attribute, not a tensor of the graph; give a Python value")
        value = value.numpy()
    if isinstance(value, np.ndarray):
        value = value.item() if value.ndim == 0 else value.tolist()
    elif getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        value = value.item()  # a PyTorch or JAX scalar
    return value


def texts_over(name: str, names: Sequence[str], texts: Sequence[str], over: dict) -> dict:
    """Attributes as text by name (``names`` and ``texts``), with those of ``over``, Python
    values the core gives (a tangent's, a route's), written over them as text."""
    given = dict(zip(names, texts))
    given.update((k, text(name, k, v)) for k, v in over.items())
    return given


def text(name: str, attr: str, value: Any) -> str:
    """An attribute as the text the core reads for its kind: integers, numbers, true or
    false, integers separated by commas, names, and a fill element's bytes in hex."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return "bytes:" + bytes(value).hex()
    if isinstance(value, (list, tuple)):
        return ",".join(str(operator.index(v)) for v in value)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        # Its text as a plain str: a subclass's own methods could hide a separator.
        value = str.__str__(value)
        # Attributes separated by ";" or a line break where an op carries them in one
        # string (PyTorch's).
        if any(c in value for c in ";\n\r"):
            raise ValueError(f"{name}: {attr} must not hold a line break or a ';', got "
                             f"{value!r}")
        return value
    if hasattr(value, "__index__"):
        return str(operator.index(value))
    raise TypeError(f"{name}: {attr} takes a number, a name or a list of integers, "
                    f"not {type(value).__name__}")


def fill_bytes(bad_indices: str, fill_value: Any, dtype: Optional[np.dtype]) -> Optional[bytes]:
    """The bytes of a given fill element for ``bad_indices="fill"`` (JAX's ``mode="fill"``),
    made by NumPy in params' own dtype (which only that policy reads); ``None`` for the
    dtype's default, which the core makes (JAX's, from its dtype table; zeros, empty or None
    for dtypes it does not have)."""
    if bad_indices != "fill":
        if fill_value is not None:
            raise ValueError('fill_value needs bad_indices="fill"')
        return None
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(fill_value, torch.Tensor):
        from . import _torch
        if _torch._dual(torch, [fill_value]):
            # (Its value is read as a number: its tangent would be lost.)
            raise TypeError("fill_value is one value for every index: a dual tensor of "
                            "forward AD is not taken; pass a number")
    assert dtype is not None, "the fill policy reads params' dtype"
    if dtype.kind == "O":
        if fill_value is not None:
            raise TypeError("object arrays fill bad slices with None; fill_value is not "
                            "supported for them")
        return None
    if fill_value is None:  # JAX's default for the dtype: the core's table decides
        return None
    return np.asarray(fill_value, dtype=dtype).tobytes()


#: Why an op's forward derivative is refused at an input (forward mode; a second
#: derivative through the tangent, which needs the op's derivative constant there).
NOT_ROUTED = ("the op is not linear there, jointly with its other inputs or apart from them "
              "as a weighted bag is, nor does each of its elements move at most one of the "
              "output's, as a max's, a min's or a product's do (a max_norm, a bag's or a "
              "gathered segment's max; scatter_reduce's amax or amin without its input, "
              "whose gradient, PyTorch's, counts the input among the ties)")
NOT_LINEAR = ("the op's derivative reads that input's value, which forward mode holds "
              "fixed (a product's factors, a max_norm, a weighted bag's table along its "
              "weights and its weights along its table)")


class NotLinear(Exception):
    """A tangent reached an input the op is not linear in: ``position`` in its signature.
    Each front end raises its framework's refusal for it."""

    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


def owners(counts: Sequence[int]) -> list:
    """The input of the op's signature that each flat tensor belongs to, from each input's
    count of tensors (a list input's several, one left out none)."""
    return [k for k, n in enumerate(counts) for _ in range(n)]


def tangent_inputs(positions: Any, counts: Sequence[int], flat: Sequence[Any],
                   tangents: Sequence[Any], zeros_like: Any) -> list:
    """The inputs of the op's tangent (forward mode, issue 55), flat: ``tangents`` (one per
    flat tensor, ``None`` for none) at the inputs the op is linear in (``positions``, the
    registry's ``_core.op_linear``; ``zeros_like`` where one has none), the others as they
    are. :class:`NotLinear` where a tangent reaches an input it is not linear in."""
    owner = owners(counts)
    for j, t in enumerate(tangents):
        if t is not None and owner[j] not in positions:
            raise NotLinear(owner[j])
    return [x if owner[j] not in positions else
            tangents[j] if tangents[j] is not None else zeros_like(x)
            for j, x in enumerate(flat)]


class Complex(Exception):
    """A tangent reached a complex input of a routed op: ``position`` in its signature. Each
    front end raises its framework's refusal for it."""

    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


def routed_inputs(positions: Any, counts: Sequence[int], flat: Sequence[Any],
                  tangents: Sequence[Any], factors: Sequence[Any], zeros_like: Any,
                  scale: Any, is_complex: Any) -> list:
    """The inputs of a routed op's tangent (forward mode of a max, a min, a product: the
    registry's ``_core.op_routed``), flat: at the inputs of ``positions``, each tangent
    scaled (``scale(factor, tangent)``) by its factor, the op's gradient for an upstream of
    ones, one per flat tensor (zeros where none reached it); the others as they are.
    :class:`NotLinear` where a tangent reaches another input; :class:`Complex` where it
    reaches a complex one (a gradient of complex inputs is conjugated in some frameworks'
    conventions and not in others, so its factor is not known here)."""
    owner = owners(counts)
    for j, t in enumerate(tangents):
        if t is not None and owner[j] not in positions:
            raise NotLinear(owner[j])
        if t is not None and is_complex(flat[j]):
            raise Complex(owner[j])
    return [x if owner[j] not in positions else
            scale(factors[j], tangents[j]) if tangents[j] is not None else zeros_like(x)
            for j, x in enumerate(flat)]


def multilinear_terms(groups: Sequence[tuple], counts: Sequence[int], flat: Sequence[Any],
                      tangents: Sequence[Any], zeros_like: Any) -> list:
    """The terms of a multilinear op's tangent (forward mode of a weighted bag: the
    registry's ``_core.op_multilinear``), which the front end sums, by the product rule:
    for each group (``(positions, tangent_attrs)``) that a tangent reaches, its tangent
    attributes and the inputs flat, that group's tangents (``zeros_like`` where one has
    none), the others as they are. :class:`NotLinear` where a tangent reaches an input in
    no group."""
    owner = owners(counts)
    within = {k for positions, _ in groups for k in positions}
    for j, t in enumerate(tangents):
        if t is not None and owner[j] not in within:
            raise NotLinear(owner[j])
    return [(attrs, tangent_inputs(positions, counts, flat,
                                   [t if owner[j] in positions else None
                                    for j, t in enumerate(tangents)], zeros_like))
            for positions, attrs in groups
            if any(t is not None and owner[j] in positions for j, t in enumerate(tangents))]
