"""Object arrays (``dtype=object``) through every op of the Python API.

An object array holds references, so an op that stores into one must keep every count right:
a missing reference frees an object the array still points at, an extra one leaks it. Each
scenario below runs in a fresh ``python -X dev`` process (a crash fails one test, not the
run), with a garbage collection and fresh allocations after each call, so that an object
freed too early is seen: its memory is reused and the array then points at something else.

Each scenario checks one of three things: the result equals NumPy's, element for element;
every object's reference count equals the count after NumPy's own op; or a clear exception
(``TypeError`` for an op with no object kernel, ``ValueError`` for an aliased ``out``).
"""
from __future__ import annotations

import gc
import subprocess
import sys
from typing import Callable, Dict, List

import numpy as np
import pytest

SCENARIOS: Dict[str, Callable[[], None]] = {}


def scenario(f: Callable[[], None]) -> Callable[[], None]:
    SCENARIOS[f.__name__] = f
    return f


class Tracked:
    """An object of its own (never interned or cached), whose value is checked after the
    call, and whose ``__del__`` can run code while a store is under way."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tracked) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Tracked({self.value})"

    def __del__(self) -> None:
        if ON_DEL:
            ON_DEL[0]()


# What every Tracked object's __del__ runs, if set (a list, so a test can set and clear it).
ON_DEL: List[Callable[[], None]] = []


def objects(values: List[int], shape: tuple = ()) -> np.ndarray:
    a = np.empty(len(values), dtype=object)
    for k, v in enumerate(values):
        a[k] = Tracked(v)
    return a.reshape(shape or (len(values),))


def churn() -> None:
    """A collection, then fresh objects, so freed memory is reused before the check."""
    gc.collect()
    [Tracked(-k) for k in range(2000)]
    [bytearray(48) for _ in range(2000)]


def values_of(a: np.ndarray) -> list:
    return [None if x is None else x.value for x in a.reshape(-1)]


def same_counts(ng_call: Callable[[], object], np_call: Callable[[], object],
                watched: List[object]) -> None:
    """``ng_call``'s result holds exactly the references NumPy's holds: each watched
    object's count, with only that result alive, equals its count with only NumPy's."""
    r = ng_call()
    churn()
    ours = [sys.getrefcount(o) for o in watched]
    del r
    r = np_call()
    churn()
    theirs = [sys.getrefcount(o) for o in watched]
    del r
    assert ours == theirs, (ours, theirs)


def expect(error: type, call: Callable[[], object], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


# -- gather, gather_nd, take_along_axis, take, ragged: reads into new arrays or out= -------

@scenario
def gather_new() -> None:
    import ndgather as ng
    p = objects([0, 1, 2, 3], (2, 2))
    idx = np.array([1, 0, 1])
    r = ng.gather(p, idx)
    churn()
    assert values_of(r) == values_of(np.take(p, idx, axis=0))
    same_counts(lambda: ng.gather(p, idx, axis=1), lambda: np.take(p, idx, axis=1), list(p.flat))


@scenario
def gather_into_out_releases_old_objects_after_storing() -> None:
    import ndgather as ng
    p = objects([0, 1, 2])
    out = objects([10, 11, 12, 13])
    # Each old object's __del__ drops params' own references while the store runs: the
    # objects still to be stored must stay alive.
    ON_DEL.append(lambda: p.fill(None))
    try:
        r = ng.gather(p, np.array([2, 2, 0, 1]), out=out)
        assert r is out
    finally:
        ON_DEL.clear()
    churn()
    assert values_of(out) == [2, 2, 0, 1]


@scenario
def gather_out_aliasing_params_is_refused() -> None:
    import ndgather as ng
    p = objects([0, 1, 2])
    expect(ValueError, lambda: ng.gather(p, np.array([2, 1, 0]), out=p), "shares memory")
    expect(ValueError, lambda: ng.gather(p, np.array([0]), out=p[2:]), "shares memory")
    expect(TypeError, lambda: ng.gather(p, np.array([0]), out=np.zeros(1)), "dtype")
    expect(TypeError, lambda: ng.gather(np.arange(3), np.array([0]), out=objects([5])), "dtype")
    churn()
    assert values_of(p) == [0, 1, 2]


@scenario
def gather_fill_policies_give_none() -> None:
    import ndgather as ng
    p = objects([0, 1])
    for policy in ("ignore", "fill"):
        r = ng.gather(p, np.array([1, 5]), bad_indices=policy)
        churn()
        assert values_of(r) == [1, None], policy
    r = ng.gather(p, np.array([-1, 7]), bad_indices="clamp")
    churn()
    assert values_of(r) == [0, 1]
    expect(TypeError, lambda: ng.gather(p, np.array([3]), bad_indices="fill", fill_value=p[0]),
           "fill_value")


@scenario
def gather_nd_new_and_out() -> None:
    import ndgather as ng
    p = objects(list(range(6)), (2, 3))
    idx = np.array([[1, 2], [0, 0], [1, 0]])
    r = ng.gather_nd(p, idx)
    churn()
    assert values_of(r) == [5, 0, 3]
    out = objects([7, 8, 9])
    ng.gather_nd(p, idx, out=out)
    churn()
    assert values_of(out) == [5, 0, 3]
    same_counts(lambda: ng.gather_nd(p, idx), lambda: p[tuple(idx.T)], list(p.flat))
    expect(ValueError, lambda: ng.gather_nd(p, np.array([[0], [1]]), out=p), "shares memory")


@scenario
def take_along_axis_into_itself_is_refused() -> None:
    # The second reproduction: it killed the interpreter.
    import ndgather as ng
    a = objects([0, 1, 2], (1, 3))
    idx = np.array([[2, 0, 1]])
    expect(ValueError, lambda: ng.take_along_axis(a, idx, axis=1, out=a), "shares memory")
    churn()
    assert values_of(a) == [0, 1, 2]
    r = ng.take_along_axis(a, idx, axis=1)
    churn()
    assert values_of(r) == values_of(np.take_along_axis(a, idx, axis=1))
    out = objects([5, 6, 7], (1, 3))
    ng.take_along_axis(a, idx, axis=1, out=out)
    churn()
    assert values_of(out) == [2, 0, 1]
    same_counts(lambda: ng.take_along_axis(a, idx, axis=1),
                lambda: np.take_along_axis(a, idx, axis=1), list(a.flat))


@scenario
def take_and_ragged() -> None:
    import ndgather as ng
    p = objects([0, 1, 2, 3])
    r = ng.take(p, np.array([3, -1, 0]))
    churn()
    assert values_of(r) == [3, 3, 0]
    rp = ng.Ragged(objects([0, 1, 2, 3, 4]), [np.array([0, 2, 2, 5])])
    r = ng.gather(rp, np.array([2, 0, 2]))
    churn()
    assert values_of(r.values) == [2, 3, 4, 0, 1, 2, 3, 4]


@scenario
def other_dtypes_holding_objects_are_refused() -> None:
    # StringDType and records with object fields hold references, but not one per 8 bytes:
    # read as addresses they crashed the ragged path.
    import ndgather as ng
    strings = np.array(["alpha", "beta"], dtype=np.dtypes.StringDType())
    records = np.zeros(2, [("o", "O"), ("i", "<i8")])
    records["i"] = 0x10
    for p in (strings, records):
        for call in (lambda: ng.gather(p, ng.Ragged.from_list([[1], [0, 1]])),
                     lambda: ng.gather(ng.Ragged(p, [np.array([0, 1, 2])]), np.array([1, 0])),
                     lambda: ng.gather(p, np.array([1, 0])),
                     lambda: ng.gather_nd(p, np.array([[1]]))):
            expect(TypeError, call, "holds Python objects")
    churn()
    assert records["i"].tolist() == [0x10, 0x10] and list(strings) == ["alpha", "beta"]


@scenario
def misaligned_object_references_are_refused() -> None:
    # The object field of a packed record: its references are not 8-byte aligned, so they
    # cannot be moved as addresses. Refused as params, as a ragged operand and as out.
    import ndgather as ng
    packed = np.zeros(3, np.dtype([("pad", "u1"), ("o", "O")], align=False))
    field = packed["o"]
    assert field.dtype == object and field.strides == (9,)
    for k in range(3):
        field[k] = Tracked(k)
    out = np.zeros(2, np.dtype([("pad", "u1"), ("o", "O")], align=False))["o"]
    for call in (lambda: ng.gather(field, np.array([1, 0])),
                 lambda: ng.gather(ng.Ragged(field, [np.array([0, 1, 3])]), np.array([1, 0])),
                 lambda: ng.gather(objects([0, 1]), np.array([1, 0]), out=out)):
        expect(TypeError, call, "not 8-byte aligned")
    churn()
    assert values_of(field) == [0, 1, 2] and list(out) == [0, 0]



# -- put_along_axis: stores objects into arr in place ----------------------------------------

@scenario
def put_along_axis_takes_references() -> None:
    # The first reproduction: once `vals` was released, `a` pointed at freed objects.
    import ndgather as ng
    a = np.empty(4, object)
    vals = [Tracked(k) for k in range(4)]
    ng.put_along_axis(a, np.array([0, 1, 2, 3]), np.array(vals, dtype=object), axis=0)
    del vals
    churn()
    assert values_of(a) == [0, 1, 2, 3]


@scenario
def put_along_axis_equals_numpy_with_counts() -> None:
    import ndgather as ng
    base = objects(list(range(6)), (2, 3))
    v = objects([10, 11], (2, 1))
    idx = np.array([[2], [0]])
    watched = list(base.flat) + list(v.flat)

    def ours() -> np.ndarray:
        a = base.copy()
        ng.put_along_axis(a, idx, v, axis=1)
        return a

    def numpys() -> np.ndarray:
        a = base.copy()
        np.put_along_axis(a, idx, v, axis=1)
        return a

    churn()
    assert values_of(ours()) == values_of(numpys())
    same_counts(ours, numpys, watched)
    flat = base.copy()
    ng.put_along_axis(flat, np.array([5, 0, 5]), objects([20, 21, 22]), axis=None)
    churn()
    assert values_of(flat) == [21, 1, 2, 3, 4, 22]


@scenario
def put_along_axis_into_empty_arrays() -> None:
    import ndgather as ng
    for shape, ishape in (((0, 2), (0, 1)), ((2, 0), (2, 0)), ((1, 0, 3), (1, 0, 1))):
        a = np.empty(shape, object)
        idx = np.zeros(ishape, np.intp)
        ng.put_along_axis(a, idx, np.empty(ishape, object), axis=len(shape) - 1)
        expected = np.empty(shape, object)
        np.put_along_axis(expected, idx, np.empty(ishape, object), axis=len(shape) - 1)
        assert a.shape == expected.shape


@scenario
def put_along_axis_errors_write_nothing() -> None:
    import ndgather as ng
    a = objects([0, 1, 2])
    expect(IndexError, lambda: ng.put_along_axis(a, np.array([0, 9]), objects([5, 6]), 0),
           "out of bounds|not in")
    churn()
    assert values_of(a) == [0, 1, 2]
    rec = np.zeros(2, dtype=[("o", object)])
    expect(TypeError, lambda: ng.put_along_axis(rec, np.array([0]), rec[:1].copy(), 0),
           "holds Python objects")


@scenario
def put_along_axis_values_aliasing_arr() -> None:
    # NumPy reads values before it writes; so does ndgather, through a copy of them.
    import ndgather as ng
    a = objects([0, 1, 2, 3])
    expected = a.copy()
    np.put_along_axis(expected, np.array([3, 2, 1, 0]), expected.copy(), axis=0)
    ng.put_along_axis(a, np.array([3, 2, 1, 0]), a, axis=0)
    churn()
    assert values_of(a) == values_of(expected) == [3, 2, 1, 0]


@scenario
def put_along_axis_del_during_store() -> None:
    # The old objects' __del__ releases the new values' last other references.
    import ndgather as ng
    a = objects([0, 1, 2])
    holder = {"v": objects([7, 8, 9])}
    v = holder["v"]
    ON_DEL.append(holder.clear)
    try:
        ng.put_along_axis(a, np.array([0, 1, 2]), v, axis=0)
    finally:
        ON_DEL.clear()
    del v
    churn()
    assert values_of(a) == [7, 8, 9]


# -- the ops with no object kernel: a clear TypeError, nothing written ----------------------

@scenario
def write_ops_refuse_objects() -> None:
    import ndgather as ng
    t = objects([0, 1, 2, 3])
    idx = np.array([[1], [3]])
    u = objects([8, 9])
    for name in ("update", "add", "sub", "min", "max"):
        op = getattr(ng, f"tensor_scatter_nd_{name}")
        expect(TypeError, lambda: op(t, idx, u), "object")
        expect(TypeError, lambda: op(t, idx, u, out=t), "object")
        expect(TypeError, lambda: op(np.zeros(4), idx, u), "object|float")
    expect(TypeError, lambda: ng.scatter_reduce(t, 0, np.array([1, 3]), u, "sum"), "object")
    expect(TypeError, lambda: ng.scatter_reduce(t, 0, np.array([1, 3]), u, "amax", out=t),
           "object")
    churn()
    assert values_of(t) == [0, 1, 2, 3]


@scenario
def numeric_ops_refuse_objects() -> None:
    import ndgather as ng
    t = objects([0, 1, 2, 3], (2, 2))
    ids = np.array([1, 0])
    calls = {
        "embedding_lookup": lambda: ng.embedding_lookup(t, ids),
        "embedding_lookup_grad": lambda: ng.embedding_lookup_grad(t, ids, t),
        "embedding_bag": lambda: ng.embedding_bag(t, np.array([[0, 1]])),
        "embedding_lookup_sparse": lambda: ng.embedding_lookup_sparse(
            t, ([[0, 0]], [1], [1, 1]), None),
        "gather_grad": lambda: ng.gather_grad((2, 2), ids, t),
        "gather_nd_grad": lambda: ng.gather_nd_grad((2, 2), np.array([[0], [1]]), t),
        "take_along_axis_grad": lambda: ng.take_along_axis_grad((2, 2), [[0, 1], [1, 0]], t, 1),
        "scatter_nd": lambda: ng.scatter_nd(np.array([[0], [1]]), t, (2, 2)),
        "unsorted_segment_sum": lambda: ng.unsorted_segment_sum(t, ids, 2),
    }
    for name, call in calls.items():
        try:
            call()
        except (TypeError, ValueError) as e:
            assert str(e), name
        else:
            raise AssertionError(f"{name} took an object array")
    churn()
    assert values_of(t) == [0, 1, 2, 3]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_object_arrays_under_dev_mode(name: str) -> None:
    """Each scenario in a fresh ``python -X dev`` process: a crash fails this test only."""
    run = subprocess.run([sys.executable, "-X", "dev", "-X", "faulthandler", __file__, name],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (run.returncode, run.stdout[-3000:], run.stderr[-3000:])
    assert "ok" in run.stdout
    assert "Exception ignored" not in run.stderr, run.stderr[-3000:]


if __name__ == "__main__":
    SCENARIOS[sys.argv[1]]()
    churn()
    print("ok")
