"""A smoke test of an installed ndgather wheel on a Python the full test environment does not
run on (scripts/test.sh runs it on 3.9 and 3.13 where pyenv has them): the package imports,
and one op of each family gives its known result or TensorFlow's error."""
import sys

import numpy as np

import ndgather as ng

p = np.arange(12.0).reshape(3, 4)
assert ng.gather(p, [2, 0]).tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
# A string attribute through the door (read with PyString::to_cow).
assert ng.unsorted_segment_sum(p, [0, 7, 1], 2, bad_indices="ignore").tolist() == [
    [0, 1, 2, 3], [8, 9, 10, 11]]
assert ng.gather_nd(p, [[1, 2]]).tolist() == [6]
assert ng.take_along_axis(p, np.array([[1], [0], [3]]), axis=1).ravel().tolist() == [1, 4, 11]
assert ng.unsorted_segment_max(p, [0, 1, 0], 2).tolist() == [[8, 9, 10, 11], [4, 5, 6, 7]]
assert ng.tensor_scatter_nd_add(p, [[1]], np.ones((1, 4))).sum() == 70
assert ng.embedding_lookup(p, [1]).tolist() == [[4, 5, 6, 7]]
assert repr(ng.gather(ng.Ragged.from_list([[1, 2], [], [3]]), [2, 0])) == "Ragged([[3], [1, 2]])"
try:
    ng.gather(p, [5])
except ng.InvalidArgumentError as e:
    assert str(e) == "indices[0] = 5 is not in [0, 3)", e
else:
    raise AssertionError("no error for an index out of range")
print(f"ndgather {ng.__version__} on Python {sys.version.split()[0]}, NumPy {np.__version__}: ok")
