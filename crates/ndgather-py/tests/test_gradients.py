"""Gradients and scatters against NumPy's np.add.at (duplicates add up)."""
import ml_dtypes
import numpy as np
import pytest

import ndgather as ng

NUMBERS = ["i1", "i4", "u2", "u8", "f2", "f4", "f8", ">f8", "c8", "c16", ml_dtypes.bfloat16]


@pytest.mark.parametrize("dtype", NUMBERS, ids=str)
def test_gather_grad_is_a_scatter_add(dtype):
    rng = np.random.default_rng(0)
    indices = rng.integers(0, 5, size=(4, 3))
    grad = rng.integers(0, 9, size=(2, 4, 3, 6)).astype(dtype)
    want = np.zeros((2, 5, 6), dtype=np.dtype(dtype).newbyteorder("="))
    np.add.at(want, (slice(None), indices), grad.astype(want.dtype))
    got = ng.gather_grad((2, 5, 6), indices, grad, axis=1)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_gather_grad_default_axis_follows_batch_dims():
    indices = np.array([[0, 0], [2, 1]])
    got = ng.gather_grad((2, 3), indices, np.ones((2, 2)), batch_dims=1)
    assert got.tolist() == [[2.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
    assert np.array_equal(got, ng.gather_grad((2, 3), indices, np.ones((2, 2)), axis=-1,
                                              batch_dims=-1))


@pytest.mark.parametrize("dtype", NUMBERS, ids=str)
def test_gather_nd_grad_and_scatter_nd(dtype):
    rng = np.random.default_rng(1)
    indices = rng.integers(0, 4, size=(7, 2))
    updates = rng.integers(0, 9, size=(7, 3)).astype(dtype)
    want = np.zeros((4, 4, 3), dtype=np.dtype(dtype).newbyteorder("="))
    np.add.at(want, (indices[:, 0], indices[:, 1]), updates.astype(want.dtype))
    assert np.array_equal(ng.gather_nd_grad((4, 4, 3), indices, updates), want)
    assert np.array_equal(ng.scatter_nd(indices, updates, (4, 4, 3)), want)


def test_scatter_nd_ignore_drops_bad_rows():
    got = ng.scatter_nd([[1], [9], [1]], np.array([1.0, 5.0, 2.0]), [3], bad_indices="ignore")
    assert got.tolist() == [0.0, 3.0, 0.0]


def test_unsorted_segment_sum_matches_add_at():
    rng = np.random.default_rng(2)
    data = rng.normal(size=(10, 4))
    ids = rng.integers(0, 3, size=10)
    want = np.zeros((3, 4))
    np.add.at(want, ids, data)
    assert np.array_equal(ng.unsorted_segment_sum(data, ids, 3), want)
    got = ng.unsorted_segment_sum(data, np.where(ids == 2, 7, ids), 3, bad_indices="ignore")
    assert np.array_equal(got[:2], want[:2]) and not got[2].any()
