"""Every error class: a Python exception of the right class, TensorFlow's message, never a
crash or a Rust panic message."""
import numpy as np
import pytest

import ndgather as ng


def test_invalid_argument_error_is_a_value_error():
    assert issubclass(ng.InvalidArgumentError, ValueError)
    assert ng.InvalidArgumentError.__module__ == "ndgather"


@pytest.mark.parametrize("call, message", [
    (lambda: ng.gather(np.zeros((4, 3)), [[0], [5]]), "indices[1,0] = 5 is not in [0, 4)"),
    (lambda: ng.gather(np.float32(1), [0]), "params must be at least 1 dimensional"),
    (lambda: ng.gather(np.zeros((2, 3, 4)), [0], axis=3),
     "Shape must be at least rank 4 but is rank 3"),
    (lambda: ng.gather(np.zeros((2, 3)), [[0]], axis=0, batch_dims=1),
     "batch_dims (1) must be less than or equal to axis (0)."),
    (lambda: ng.gather(np.zeros((2, 3)), [[0]], axis=1, batch_dims=3),
     "Expected batch_dims in the range [-2, 2], but got 3"),
    (lambda: ng.gather(np.zeros((2, 3)), np.zeros((3, 1), int), axis=1, batch_dims=1),
     "params.shape[0]: 2 should be equal to indices.shape[0]: 3"),
    (lambda: ng.gather(np.zeros(40000), np.array([0], np.int16)),
     "params.shape[0] too large for int16 indexing: 40000 > 32767"),
    (lambda: ng.gather_nd(np.zeros((2, 3)), 0), "indices must be at least a vector"),
    (lambda: ng.gather_nd(np.zeros((2, 3)), [[0, 0, 0]]),
     "index innermost dimension length must be <= params rank; saw: 3 vs. 2"),
    (lambda: ng.gather_nd(np.zeros((2, 3)), [[1, 3]]),
     "indices[0] = [1, 3] does not index into param shape [2,3]"),
    (lambda: ng.gather_nd(np.zeros((2, 3)), [[0]], batch_dims=-1),
     "tf.gather_nd does not allow negative batch_dims."),
    (lambda: ng.gather_nd(np.zeros((0, 3)), [[0]]),
     "Requested more than 0 entries, but params is empty.  Params shape: [0,3]"),
    (lambda: ng.gather(np.zeros(3), [0], out=np.zeros(2)),
     "output has shape [2], but the result has shape [1]"),
    (lambda: ng.gather_grad((2, 3), [0], np.ones((2, 3))),
     "grad has shape [2,3], but the op's output has shape [1,3]"),
    (lambda: ng.scatter_nd([[9]], np.ones(1), [8]), "indices[0] = [9] does not index into shape [8]"),
    (lambda: ng.unsorted_segment_sum(np.ones(3), [0, 1, 2], 2),
     "segment_ids[2] = 2 is out of range [0, 2)"),
    (lambda: ng.unsorted_segment_sum(np.ones(3), [0, 1, 2], -1),
     "Input num_segments == -1 must not be negative."),
    (lambda: ng.scatter_nd([[0]], np.ones(1), [-8]),
         'scatter_nd: attribute "shape" must not have negative sizes, got [-8]'),
])
def test_invalid_arguments_carry_tensorflows_message(call, message):
    with pytest.raises(ng.InvalidArgumentError) as info:
        call()
    assert str(info.value) == message


@pytest.mark.parametrize("call, fragment", [
    (lambda: ng.gather([1.0, 2.0], [0.5]), "indices must be an array of integers"),
    (lambda: ng.gather([1.0, 2.0], [True]), "indices must be an array of integers"),
    (lambda: ng.gather_nd([1.0, 2.0], [["a"]]), "indices must be an array of integers"),
    (lambda: ng.gather(np.zeros(3), [0], out=np.zeros(1, np.float32)), "out has dtype float32"),
    (lambda: ng.gather(np.zeros(3), [0], out=[0.0]), "out must be an array"),
    (lambda: ng.gather_grad((3,), [0], np.array(["a"])), "grad has dtype <U1"),
    (lambda: ng.scatter_nd([[0]], np.array([True]), [2]), r"ScatterNd\[T=DT_BOOL\]"),
    (lambda: ng.gather(np.zeros(3), [0], axis=0.5), "integer"),
    (lambda: ng.gather(np.zeros(2, dtype=[("o", "O"), ("i", "i4")]), [0]),
     "holds Python objects: only arrays of dtype=object"),
])
def test_wrong_types_are_type_errors(call, fragment):
    with pytest.raises(TypeError, match=fragment):
        call()


def test_bad_policy_name_is_a_value_error():
    with pytest.raises(ValueError, match=r"bad_indices must be one of \["):
        ng.gather([1], [0], bad_indices="nearest")


def test_annotations_list_the_policies_of_the_core():
    """The ``BadIndices`` Literal the signatures are annotated with is the core's
    BadIndices::ALL, in order."""
    import ast
    import re
    import typing

    with pytest.raises(ValueError) as err:
        ng.gather([1], [0], bad_indices="nearest")
    core = ast.literal_eval(re.search(r"one of (\[.*?\])", str(err.value)).group(1))
    assert list(typing.get_args(ng.BadIndices)) == core
    hints = typing.get_type_hints(ng.gather)
    assert hints["bad_indices"] == ng.BadIndices


def test_out_problems_are_reported():
    with pytest.raises(ValueError, match="read-only"):
        out = np.zeros(1)
        out.flags.writeable = False
        ng.gather(np.zeros(3), [0], out=out)
    with pytest.raises(ValueError, match="share memory"):
        ng.gather(np.zeros(3), [0, 1], out=np.lib.stride_tricks.as_strided(np.zeros(2), (2,), (0,)))
    a = np.arange(10.0)
    with pytest.raises(ValueError, match="shares memory with params or indices"):
        ng.gather(a, [1, 2], out=a[5:7])


def test_impossible_allocations_are_memory_errors():
    huge = np.broadcast_to(np.zeros(1, np.int32), (1 << 40,))  # 2**40 indices, no memory
    with pytest.raises(MemoryError):
        ng.gather(np.zeros((2, 1 << 10), np.float32), huge)
    with pytest.raises((MemoryError, ng.InvalidArgumentError)):
        ng.scatter_nd(np.zeros((1, 2), np.int64), np.ones(1), [1 << 40, 1 << 40])


def test_errors_leave_out_unchanged():
    out = np.full(2, 7.0)
    with pytest.raises(ng.InvalidArgumentError):
        ng.gather(np.zeros(3), [0, 3], out=out)
    assert out.tolist() == [7.0, 7.0]


def test_numpy_functions_raise_numpys_axis_error():
    a, i = np.zeros((2, 2)), np.zeros((2, 2), np.int64)
    calls = [(ng.take, np.take, (a, i[0]), {"axis": 2}),
             (ng.take_along_axis, np.take_along_axis, (a, i), {"axis": -3}),
             (ng.put_along_axis, np.put_along_axis, (a.copy(), i, 1.0), {"axis": 2})]
    for ours, numpys, args, kw in calls:
        with pytest.raises(np.exceptions.AxisError) as theirs:
            numpys(*args, **kw)
        with pytest.raises(np.exceptions.AxisError) as e:
            ours(*args, **kw)
        assert str(e.value) == str(theirs.value)
