"""The door keeps ops prepared from a call's attributes for the next call with the same
objects (``src/prepared.rs``). Whatever it keeps, each call must read its own attributes:
a dict changed between calls, a list changed in place, another op with the same dict, a
value of a mutable or subclassed type, more call sites than it keeps, and other threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ndgather as ng
from ndgather import _core

indices = np.array([[1], [7]])  # 7 is outside a table of 4 rows
updates = np.array([[1.0, 2.0], [3.0, 4.0]])


def table() -> np.ndarray:
    return np.zeros((4, 2))


def test_a_dict_changed_between_calls_is_read_again():
    attrs = {"bad_indices": "error"}
    with pytest.raises(ng.InvalidArgumentError):
        _core.run_op("tensor_scatter_nd_add", [table(), indices, updates], attrs)
    attrs["bad_indices"] = "ignore"
    out = _core.run_op("tensor_scatter_nd_add", [table(), indices, updates], attrs)
    assert out.tolist() == [[0, 0], [1, 2], [0, 0], [0, 0]]
    attrs["bad_indices"] = "clamp"
    out = _core.run_op("tensor_scatter_nd_add", [table(), indices, updates], attrs)
    assert out.tolist() == [[0, 0], [1, 2], [0, 0], [3, 4]]


def test_another_op_with_the_same_dict_is_that_op():
    attrs = {"bad_indices": "ignore"}
    add = _core.run_op("tensor_scatter_nd_add", [table() + 1, indices, updates], attrs)
    sub = _core.run_op("tensor_scatter_nd_sub", [table() + 1, indices, updates], attrs)
    assert add.tolist() == [[1, 1], [2, 3], [1, 1], [1, 1]]
    assert sub.tolist() == [[1, 1], [0, -1], [1, 1], [1, 1]]


def test_a_list_changed_in_place_is_read_again():
    shape = [3, 2]
    attrs = {"shape": shape, "bad_indices": "ignore"}
    first = _core.run_op("scatter_nd", [indices, updates], attrs)
    shape[0] = 8
    second = _core.run_op("scatter_nd", [indices, updates], attrs)
    assert first.shape == (3, 2) and second.shape == (8, 2)
    assert second[7].tolist() == [3, 4]


def test_an_int_changed_between_calls_is_read_again():
    src = np.array([[1.0, 2.0], [3.0, 4.0]])
    index = np.array([[0, 0], [0, 0]])
    attrs = {"dim": 0, "reduce": "sum", "include_self": True, "bad_indices": "error"}
    along_rows = _core.run_op("scatter_reduce", [np.zeros((2, 2)), index, src], attrs)
    attrs["dim"] = 1
    along_columns = _core.run_op("scatter_reduce", [np.zeros((2, 2)), index, src], attrs)
    assert along_rows.tolist() == [[4, 6], [0, 0]]
    assert along_columns.tolist() == [[3, 0], [7, 0]]


def test_a_value_that_changes_the_dict_while_read_keeps_nothing():
    src = np.array([[1.0, 2.0], [3.0, 4.0]])
    index = np.array([[0, 0], [0, 0]])

    class Dim:
        """An index that, read, puts another value in its place in the dict."""

        def __init__(self, attrs: dict) -> None:
            self.attrs = attrs

        def __index__(self) -> int:
            self.attrs["dim"] = 1
            return 0

    attrs = {"dim": None, "reduce": "sum", "include_self": True, "bad_indices": "error"}
    attrs["dim"] = Dim(attrs)
    first = _core.run_op("scatter_reduce", [np.zeros((2, 2)), index, src], attrs)
    assert first.tolist() == [[4, 6], [0, 0]]  # read as 0
    # The dict now holds only interned objects, which a later call passes too: it must not
    # find the op read from the value that was there.
    assert ng.scatter_reduce(np.zeros((2, 2)), 1, index, src, "sum").tolist() == [[3, 0], [7, 0]]
    assert _core.run_op("scatter_reduce", [np.zeros((2, 2)), index, src],
                        attrs).tolist() == [[3, 0], [7, 0]]


class Policy(str):
    """A string subclass: its objects may carry state, so the door keeps no op for them."""


def test_a_value_of_a_str_subclass_works_each_time():
    for policy, row in [(Policy("ignore"), [0, 0]), (Policy("clamp"), [3, 4])] * 2:
        out = _core.run_op("tensor_scatter_nd_add", [table(), indices, updates],
                           {"bad_indices": policy})
        assert out[3].tolist() == row


def test_more_call_sites_than_are_kept():
    policies = ["ignore", "clamp", "wrap", "fill"]
    ops = ["add", "sub", "max", "update"]
    expected = {}
    for _ in range(3):
        for op in ops:
            for policy in policies:
                out = getattr(ng, f"tensor_scatter_nd_{op}")(table(), indices, updates,
                                                            bad_indices=policy)
                assert expected.setdefault((op, policy), out.tolist()) == out.tolist()
    assert expected[("sub", "clamp")][3] == [-3, -4]
    assert expected[("update", "ignore")][3] == [0, 0]


def test_threads_each_get_their_own_attributes():
    errors = []

    def work(policy: str, row: list[float]) -> None:
        try:
            for _ in range(2000):
                out = ng.tensor_scatter_nd_add(table(), indices, updates, bad_indices=policy)
                assert out[3].tolist() == row, (policy, out)
        except Exception as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=work, args=a)
               for a in [("ignore", [0, 0]), ("clamp", [3, 4])] * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
