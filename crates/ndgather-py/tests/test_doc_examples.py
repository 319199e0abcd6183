"""The 45 worked examples of the seed pages (kept in the Rust crate's `examples` module and
copied, checked for drift by a Rust test, to data/doc_examples.json)."""
import ast
import json
import pathlib

import numpy as np
import pytest

import ndgather as ng

EXAMPLES = json.loads((pathlib.Path(__file__).parent / "data" / "doc_examples.json").read_text())


def value(spec):
    if "literal" in spec:
        return np.asarray(ast.literal_eval(spec["literal"]))
    if "zeros" in spec:
        return np.zeros(spec["zeros"], dtype=np.float32)
    if "iota" in spec:
        shape = spec["iota"]
        return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    shape, bound = spec["indices"], spec["bound"]
    return (np.arange(int(np.prod(shape))) * 5 % bound).astype(np.int32).reshape(shape)


def test_all_examples_are_here():
    assert len(EXAMPLES) == 45


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["call"] for e in EXAMPLES])
def test_example(example):
    opts = example["call_options"]
    params, indices = value(example["params"]), value(example["indices"])
    if opts["op"] == "gather":
        out = ng.gather(params, indices, axis=opts["axis"], batch_dims=opts["batch_dims"])
    else:
        out = ng.gather_nd(params, indices, batch_dims=opts["batch_dims"])
    expected = example["expected"]
    if "shape" in expected:
        assert list(out.shape) == expected["shape"]
    else:
        want = np.asarray(ast.literal_eval(expected["values"]))
        assert out.shape == want.shape
        assert np.array_equal(out, want)
        assert out.dtype == params.dtype


def test_seed_identity_result_slice_equals_params_slice():
    """tf.gather's page: result[:, :, a, b, :] == params[:, :, indices[a, b], :]."""
    params = np.random.default_rng(0).normal(size=(2, 3, 7, 4)).astype(np.float32)
    indices = np.array([[0, 6], [3, 3], [5, 1]])
    result = ng.gather(params, indices, axis=2)
    for a in range(3):
        for b in range(2):
            assert (result[:, :, a, b, :] == params[:, :, indices[a, b], :]).all()


def test_seed_batch_dims_is_an_outer_loop():
    """batch_dims=1 equals a loop over the first axis of params and indices."""
    rng = np.random.default_rng(1)
    params = rng.normal(size=(3, 5, 4))
    indices = rng.integers(0, 5, size=(3, 6))
    looped = np.stack([ng.gather(params[i], indices[i]) for i in range(3)])
    assert np.array_equal(ng.gather(params, indices, axis=1, batch_dims=1), looped)
