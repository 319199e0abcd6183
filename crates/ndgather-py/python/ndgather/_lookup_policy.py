"""The index policies of the Dask front ends, and how a dropped index's slice is filled.

A sharded lookup and a lazy gather take the policies of :func:`ndgather.gather` but
``"fill"`` (:data:`LookupPolicy`); both fill the slice of an index that the policy drops
as :func:`_filling` says. Shared by ``_sharded_table`` and ``_lazy_gather``, which depend
on nothing else of each other.
"""

from __future__ import annotations

from typing import Literal


#: The policies a sharded lookup or a lazy gather takes (``"fill"`` is for arrays in memory).
LookupPolicy = Literal["error", "ignore", "clamp", "negative", "wrap"]


def _filling(policy):
    """How a dropped index's slice is filled: JAX's fill values under ``"fill"``, else
    zeros (``"ignore"``; the other policies drop nothing)."""
    return "fill" if policy == "fill" else "ignore"
