"""Each function's two NumPy paths agree: arrays as they are go straight to the extension, and
arrays it cannot read in place (another byte order, misaligned) or lists take the path that
converts them. Both give the same result, and the same error class and message."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import ndgather as ng


def swapped(a: np.ndarray) -> np.ndarray:
    """``a``'s values in the other byte order."""
    return a.astype(a.dtype.newbyteorder())


def misaligned(a: np.ndarray) -> np.ndarray:
    """``a``'s values at an address one byte off their alignment."""
    buf = np.zeros(a.nbytes + 1, np.uint8)
    out = np.frombuffer(buf.data, a.dtype, a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned or a.dtype.alignment == 1
    return out


def listed(a: np.ndarray) -> Any:
    return a.tolist()


FORMS = [swapped, misaligned, listed]

params = np.arange(8, dtype="f4").reshape(4, 2)
along = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
ids = np.array([3, 1])
grad = np.arange(4, dtype="f4").reshape(2, 2) + 1
table = np.arange(12, dtype="f4").reshape(6, 2)

# (name, call, its array arguments, which of them may be given as a list: a list of floats
# is float64, which a gradient keeps)
CALLS: list[tuple[str, Callable[..., Any], list[np.ndarray], set[int]]] = [
    ("take_along_axis", lambda a, i: ng.take_along_axis(a, i, axis=1), [params, along], {1}),
    ("gather_grad", lambda i, g: ng.gather_grad([4, 2], i, g), [ids, grad], {0}),
    ("gather_nd_grad", lambda i, g: ng.gather_nd_grad([4, 2], i, g),
     [ids.reshape(2, 1), grad], {0}),
    ("embedding_lookup_grad", lambda t, i, g: ng.embedding_lookup_grad(t, i, g),
     [table, ids, grad], {1, 2}),
    ("scatter_reduce", lambda t, i, u: ng.scatter_reduce(t, 0, i, u, "amax"),
     [params, along, params * 3], {1}),
    ("tensor_scatter_nd_add", lambda t, i, u: ng.tensor_scatter_nd_add(t, i, u),
     [params, np.array([[1], [1]]), grad], {1, 2}),
    ("unsorted_segment_sum", lambda d, s: ng.unsorted_segment_sum(d, s, 3),
     [params, np.array([2, 0, 2, 1])], {1}),
]


def plain(result: Any) -> Any:
    """A result as comparable values: arrays as lists, IndexedSlices as their parts."""
    if isinstance(result, np.ndarray):
        return (result.dtype.newbyteorder("=").str, result.tolist())
    if isinstance(result, (list, tuple)):
        return [plain(r) for r in result]
    return result


def outcome(call: Callable[..., Any], args: list[Any]) -> Any:
    try:
        return ("ok", plain(call(*args)))
    except Exception as e:  # the class and message are what is compared
        return ("error", type(e).__name__, str(e))


@pytest.mark.parametrize("name,call,arrays,lists", CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("form", FORMS, ids=[f.__name__ for f in FORMS])
@pytest.mark.parametrize("bad", [False, True], ids=["valid", "index out of range"])
def test_converted_inputs_give_the_direct_paths_outcome(name, call, arrays, lists, form, bad):
    arrays = [a.copy() for a in arrays]
    if bad:  # the index input (the first integer array) gets an index out of range
        k = next(k for k, a in enumerate(arrays) if a.dtype.kind == "i")
        arrays[k].flat[0] = 99
    expected = outcome(call, arrays)
    assert expected[0] == ("error" if bad else "ok")
    for k in range(len(arrays)):
        if form is listed and k not in lists:
            continue
        given = list(arrays)
        given[k] = form(arrays[k])
        assert outcome(call, given) == expected, (name, form.__name__, k)


@pytest.mark.parametrize("form", [swapped, misaligned], ids=["swapped", "misaligned"])
def test_written_in_place_alike(form):
    # put_along_axis and a scatter into the tensor itself (out=tensor) write what the direct
    # path writes, and leave the array unchanged on error.
    for bad in (False, True):
        idx = along.copy()
        if bad:
            idx[0, 0] = 7
        results = []
        for i in (idx, form(idx)):
            a = params.copy()
            try:
                ng.put_along_axis(a, i, np.float32(-1), axis=1)
                results.append(("ok", a.tolist()))
            except IndexError as e:
                assert a.tolist() == params.tolist()
                results.append(("error", type(e).__name__, str(e)))
        assert results[0] == results[1]
        results = []
        for i in (idx, form(idx)):
            a = params.copy()
            try:
                r = ng.scatter_reduce(a, 1, i, params * 2, "sum", out=a)
                assert r is a
                results.append(("ok", a.tolist()))
            except Exception as e:
                assert a.tolist() == params.tolist()
                results.append(("error", type(e).__name__, str(e)))
        assert results[0] == results[1]


def test_ragged_gather_reads_its_splits_as_given():
    # A Ragged's checked splits go to the extension as they are; TensorFlow-style int32
    # splits and a swapped-order index give the same rows.
    rt = ng.Ragged(np.arange(6, dtype="f4"), np.array([0, 2, 5, 6], np.int32))
    r1 = ng.gather(rt, np.array([2, 0]))
    r2 = ng.gather(rt, swapped(np.array([2, 0])))
    assert r1.values.tolist() == r2.values.tolist() == [5.0, 0.0, 1.0]
    assert [s.tolist() for s in r1.nested_row_splits] == [[0, 1, 3]]


def test_a_ragged_whose_splits_were_set_since_is_read_as_before():
    # The attribute is public: splits set to a list or another integer dtype are converted,
    # as when the Ragged was made.
    for splits in ([0, 2, 2, 5], np.array([0, 2, 2, 5], np.uint8), swapped(np.array([0, 2, 2, 5])),
                   np.array([0, 9, 2, 9, 2, 9, 5])[::2]):
        rt = ng.Ragged.from_list([[1, 2], [], [3, 4, 5]])
        rt.nested_row_splits = (splits,)
        r = ng.gather(rt, [2, 0])
        assert r.values.tolist() == [3, 4, 5, 1, 2]


def test_put_along_axis_copies_values_a_list_subclass_shares():
    class Rows(list):
        def __init__(self, a):
            super().__init__([0])
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

    a = np.arange(6).reshape(2, 3)
    want = a.copy()
    np.put_along_axis(want, np.array([[2, 1, 0], [0, 2, 1]]), a.copy(), axis=1)
    ng.put_along_axis(a, np.array([[2, 1, 0], [0, 2, 1]]), Rows(a), axis=1)
    assert a.tolist() == want.tolist()


def test_a_misaligned_array_written_in_place_or_as_out():
    # NumPy allows arrays one byte off their alignment: written through a scratch copy, with
    # every check first (unchanged on error), as an aligned one is written.
    ids = np.array([[1], [3], [1]])
    upd = np.arange(6, dtype="f8").reshape(3, 2)
    for bad in (False, True):
        i = ids.copy()
        if bad:
            i[2, 0] = 9
        outcomes = []
        for make in (np.copy, misaligned):
            t = make(np.arange(8, dtype="f8").reshape(4, 2))
            before = t.copy()
            try:
                r = ng.tensor_scatter_nd_add(t, i, upd, out=t)
                assert r is t
                outcomes.append(("ok", t.tolist()))
            except Exception as e:
                assert t.tolist() == before.tolist()
                outcomes.append((type(e).__name__, str(e)))
            o = make(np.zeros((4, 2)))
            try:
                ng.scatter_reduce(np.ones((4, 2)), 0, np.clip(i[:, :1].repeat(2, 1), 0, 3)
                                  if not bad else i.repeat(2, 1), upd, "sum", out=o)
                outcomes.append(("ok", o.tolist()))
            except Exception as e:
                assert o.tolist() == [[0.0, 0.0]] * 4
                outcomes.append((type(e).__name__, str(e)))
            a = make(np.arange(8, dtype="f8").reshape(4, 2))
            try:
                ng.put_along_axis(a, np.array([[1], [0], [1], [0 if not bad else 5]]), -1.0, 1)
                outcomes.append(("ok", a.tolist()))
            except Exception as e:
                outcomes.append((type(e).__name__, str(e)))
        assert outcomes[:3] == outcomes[3:], outcomes
        assert all((o[0] == "ok") != bad for o in outcomes), outcomes
