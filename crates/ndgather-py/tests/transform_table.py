"""The tables of what passes under each framework's transformations (issue 55): each op run
under each transformation, a cell "yes" where it equals its reference, else the class of
the exception raised; a wrong result is a bug, never a cell. The docs hold each table
between two markers, and a test checks that it equals its run (``NDGATHER_BLESS=1``
rewrites it)."""

import os
import pathlib

import numpy as np

DOCS = pathlib.Path(__file__).parents[3] / "docs" / "concepts"


class Wrong(AssertionError):
    """A result that differs from its reference."""


def same(got, want, what: str, tol: float = 1e-12) -> None:
    """``got`` equals ``want`` (arrays or tensors, or lists of them) within float64's
    rounding; else :class:`Wrong`."""
    if isinstance(got, (list, tuple)):
        for g, w in zip(got, want, strict=True):
            same(g, w, what, tol)
        return
    got, want = (np.asarray(x.detach() if hasattr(x, "detach") else x) for x in (got, want))
    if got.shape != want.shape or not np.allclose(got, want, rtol=tol, atol=tol):
        raise Wrong(f"{what}: {got} != {want}")


def cell(check, calls) -> str:
    """``yes`` where every ``(what, (f, inputs))`` of ``calls`` passes ``check``; else the
    class of the first exception."""
    for _, (f, inputs) in calls:
        try:
            check(f, inputs)
        except Wrong:
            raise
        except Exception as e:  # the cell names what the framework or ndgather raised
            return f"no: `{type(e).__name__}`"
    return "yes"


def table(columns, rows) -> str:
    """The Markdown table of ``rows`` (label, calls) under ``columns`` (title, check)."""
    lines = ["| op | " + " | ".join(title for title, _ in columns) + " |",
             "|---" * (len(columns) + 1) + "|"]
    for label, calls in rows:
        lines.append(f"| {label} | " + " | ".join(cell(check, calls)
                                                  for _, check in columns) + " |")
    return "\n".join(lines)


def check_page(page: str, name: str, source: str, current: str) -> None:
    """The table ``name`` of ``docs/concepts/<page>``, made by ``tests/<source>``, equals
    ``current``."""
    path = DOCS / page
    begin, end = f"<!-- {name}: tests/{source} -->", f"<!-- end {name} -->"
    text = path.read_text()
    start, stop = text.index(begin) + len(begin), text.index(end)
    current = "\n" + current + "\n"
    if os.environ.get("NDGATHER_BLESS"):
        path.write_text(text[:start] + current + text[stop:])
        return
    assert text[start:stop] == current, (
        f"docs/concepts/{page}'s table is out of date: run it with NDGATHER_BLESS=1\n"
        + current)


def rows(index, floats) -> list:
    """The tables' rows: each a label and its calls, ``(what, (f, float inputs))``, indices
    constants. ``index`` makes a framework's integer tensor of a list, ``floats`` its
    float64 tensor of a NumPy array. The floats are distinct and positive: a max has no
    ties, a product no zeros."""
    import ndgather as ng  # (after the framework, whose test imports it first)
    data = floats(np.arange(24, dtype=np.float64).reshape(6, 4) * 0.37 + 0.5)
    updates = floats(np.arange(8, dtype=np.float64).reshape(2, 4) * 0.5 - 1.0)
    ids = index([[5, 0], [5, 3]])

    def family(names, call, inputs):
        return [(n, (call(getattr(ng, n)), inputs)) for n in names]

    def modes(label, modes, call, inputs):
        return [(f"{label} {m}", (call(m), inputs)) for m in modes]
    return [
        ("`gather`", [
            ("gather", (lambda t: ng.gather(t, index([5, 1, 1, 0])), (data,))),
            ("gather batch_dims", (lambda t: ng.gather(t, index([[3, 0]] * 6), axis=1,
                                                       batch_dims=1), (data,)))]),
        ("`gather_nd`", [("gather_nd", (lambda t: ng.gather_nd(
            t, index([[5, 3], [0, 1]])), (data,)))]),
        ("`take_along_axis`", [("take_along_axis", (lambda t: ng.take_along_axis(
            t, index([[2, 0]] * 6), axis=1), (data,)))]),
        ("`embedding_lookup` (one table, or shards)", [
            ("embedding_lookup", (lambda t: ng.embedding_lookup(t, ids), (data,))),
            ("embedding_lookup shards", (lambda a, b: ng.embedding_lookup([a, b], ids),
                                         (data[0::2], data[1::2])))]),
        ("`embedding_bag` (sum, mean)", modes(
            "embedding_bag", ("sum", "mean"), lambda mode: lambda t: ng.embedding_bag(
                t, index([1, 5, 5, 2, 0]), index([0, 2, 2]), mode=mode), (data,))),
        ("`embedding_bag` (with `per_sample_weights`)", [
            ("embedding_bag", (lambda t, w: ng.embedding_bag(
                t, index([1, 5, 5, 2, 0]), index([0, 2, 2]), mode="sum",
                per_sample_weights=w), (data, floats(np.array([1.0, 2.0, 0.5, -1.0, 3.0])))))]),
        ("`segment_*` (sum, mean)", family(
            ("segment_sum", "segment_mean"),
            lambda op: lambda d: op(d, index([0, 0, 1, 3, 3, 3])), (data,))),
        ("`segment_*` (max, min)", family(
            ("segment_max", "segment_min"),
            lambda op: lambda d: op(d, index([0, 0, 1, 3, 3, 3])), (data,))),
        ("`segment_prod`", family(
            ("segment_prod",), lambda op: lambda d: op(d, index([0, 0, 1, 3, 3, 3])),
            (data,))),
        ("`unsorted_segment_*` (sum, mean, sqrt_n)", family(
            ("unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_sqrt_n"),
            lambda op: lambda d: op(d, index([2, 0, 2, 1, 3, 0]), 4), (data,))),
        ("`unsorted_segment_*` (max, min)", family(
            ("unsorted_segment_max", "unsorted_segment_min"),
            lambda op: lambda d: op(d, index([2, 0, 2, 1, 3, 0]), 4), (data,))),
        ("`unsorted_segment_prod`", family(
            ("unsorted_segment_prod",), lambda op: lambda d: op(d, index([2, 0, 2, 1, 3, 0]), 4),
            (data,))),
        ("`gather_segment`", [("gather_segment", (lambda t: ng.gather_segment(
            t, index([0, 5, 5, 2, 1]), index([2, 0, 2, 2, 1]), 3), (data,)))]),
        ("`tensor_scatter_nd_*` (add, sub)", family(
            ("tensor_scatter_nd_add", "tensor_scatter_nd_sub"),
            lambda op: lambda t, u: op(t, index([[5], [0]]), u), (data, updates))),
        ("`tensor_scatter_nd_update`", family(
            ("tensor_scatter_nd_update",),
            lambda op: lambda t, u: op(t, index([[5], [0]]), u), (data, updates))),
        ("`tensor_scatter_nd_*` (min, max)", family(
            ("tensor_scatter_nd_min", "tensor_scatter_nd_max"),
            lambda op: lambda t, u: op(t, index([[5], [0]]), u), (data, updates))),
        ("`scatter_nd`", [("scatter_nd", (lambda u: ng.scatter_nd(
            index([[7], [0], [2]]), u, [8, 4]), (data[:3],)))]),
        ("`scatter_reduce` (sum, mean)", modes(
            "scatter_reduce", ("sum", "mean"), lambda reduce: lambda t, s: ng.scatter_reduce(
                t, 0, index([[1, 0, 5, 1], [2, 1, 0, 2]]), s, reduce),
            (data, data[:2] * 1.5 - 4.0))),
        ("`scatter_reduce` (amax)", [("scatter_reduce", (lambda t, s: ng.scatter_reduce(
            t, 0, index([[1, 0, 5, 1], [2, 1, 0, 2]]), s, "amax"),
            (data, data[:2] * 1.5 - 4.0)))]),
    ]
