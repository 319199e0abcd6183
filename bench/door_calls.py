"""Tiny calls of every op the Python package runs through the core (issue 54): each on a few
elements, so the per-call cost at the door dominates; timeit min of 5 x 5,000 calls, three
rounds, in microseconds. Ops the installed package lacks are left out, so two builds (old
and new, one process each: bench/ab.sh) can be compared line by line.

    python bench/door_calls.py
"""
import timeit

import numpy as np

import ndgather as ng

params = np.arange(8, dtype="f4").reshape(4, 2)
ids = np.array([3, 1])
along = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
table = np.arange(12, dtype="f4").reshape(6, 2)


def calls():
    yield "gather", lambda: ng.gather(params, ids)
    yield "gather_nd", lambda: ng.gather_nd(params, [[3, 1], [0, 0]])
    yield "take_along_axis", lambda: ng.take_along_axis(params, along, axis=1)
    target = params.copy()
    yield "put_along_axis", lambda: ng.put_along_axis(target, along, 1.0, axis=1)
    yield "gather_grad", lambda: ng.gather_grad([4, 2], ids, np.ones((2, 2), "f4"))
    yield "embedding_lookup", lambda: ng.embedding_lookup(table, ids)
    yield "embedding_lookup_grad", lambda: ng.embedding_lookup_grad(table, ids,
                                                                   np.ones((2, 2), "f4"))
    yield "embedding_bag", lambda: ng.embedding_bag(table, np.array([[1, 2], [3, 4]]))
    if hasattr(ng, "tensor_scatter_nd_add"):
        yield "tensor_scatter_nd_add", lambda: ng.tensor_scatter_nd_add(
            params, [[1]], np.ones((1, 2), "f4"))
    yield "scatter_reduce", lambda: ng.scatter_reduce(params, 0, along, params, "sum")
    yield "unsorted_segment_sum", lambda: ng.unsorted_segment_sum(params, [0, 1, 0, 1], 2)
    if hasattr(ng, "segment_max"):
        yield "segment_max", lambda: ng.segment_max(params, [0, 0, 1, 1])
    rt = ng.Ragged(np.arange(6, dtype="f4"), [0, 2, 5, 6])
    yield "ragged gather", lambda: ng.gather(rt, ids[1:])


for name, call in calls():
    call()
for _ in range(3):
    line = []
    for name, call in calls():
        best = min(timeit.repeat(call, number=5000, repeat=5)) / 5000 * 1e6
        line.append(f"{name} {best:.2f}")
    print("  ".join(line), flush=True)
