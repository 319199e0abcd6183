"""Freed result arrays go back to ndgather, and the next result of the same dtype and about
the same size is written into their memory: always the right values, never memory that a
live array still uses."""

import numpy as np
import pytest

import ndgather as ng

ROWS = 1 << 18  # 4 MiB of float32 rows of 4: the smallest result that is kept


def address(a):
    return a.__array_interface__["data"][0]


def test_a_freed_result_backs_the_next_one_with_the_right_values():
    params = np.arange(ROWS * 4, dtype=np.float32).reshape(ROWS, 4)
    first = np.arange(ROWS)[::-1].copy()
    second = np.arange(ROWS)
    out = ng.gather(params, first)
    np.testing.assert_array_equal(out, params[first])
    freed = address(out)
    del out
    again = ng.gather(params, second)
    assert address(again) == freed
    np.testing.assert_array_equal(again, params[second])
    # Kept alive, it is not reused: the next result has memory of its own.
    other = ng.gather_nd(params, second[:, None])
    assert address(other) != address(again)
    np.testing.assert_array_equal(other, params[second])
    np.testing.assert_array_equal(again, params[second])


def test_a_view_keeps_the_memory_of_its_base():
    params = np.ones((ROWS, 4), dtype=np.float32)
    out = ng.gather(params, np.arange(ROWS))
    view = out[:10]
    del out
    fresh = ng.gather(params * 2, np.arange(ROWS))
    assert address(fresh) != address(view)
    np.testing.assert_array_equal(view, np.ones((10, 4), dtype=np.float32))


def test_a_limit_of_zero_keeps_nothing():
    params = np.ones((ROWS, 4), dtype=np.float32)
    previous = ng.set_output_cache_limit(0)
    try:
        assert ng.set_output_cache_limit(0) == 0
        out = ng.gather(params, np.arange(ROWS))
        np.testing.assert_array_equal(out, params)
        del out
        np.testing.assert_array_equal(ng.gather(params, np.arange(ROWS)), params)
    finally:
        ng.set_output_cache_limit(previous)
    assert previous == 1 << 30


def test_a_negative_limit_is_an_error():
    with pytest.raises(ValueError, match="max_bytes must be non-negative, got -1"):
        ng.set_output_cache_limit(-1)
