"""Every case of the TensorFlow 2.21 conformance file through the Python API: values bit for
bit, TensorFlow's messages (with the two allowances of the file's README)."""
import json
import pathlib
import re

import numpy as np
import pytest

import ndgather as ng

CASES = pathlib.Path(__file__).parents[2] / "ndgather" / "tests" / "data" / "tf_cases.jsonl"


def load():
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


def array(t, strings):
    data, shape, dtype = t["data"], t["shape"], t["dtype"]
    if dtype == "string":
        values = [s.encode() for s in data]
        a = np.array(values, dtype=object) if strings == "object" else np.array(values, dtype="S")
        if strings == "S" and not values:
            a = np.array([], dtype="S1")
        return a.reshape(shape)
    if dtype.startswith("complex"):
        return np.array([complex(re_, im) for re_, im in data], dtype=dtype).reshape(shape)
    return np.array(data, dtype=dtype).reshape(shape)


def run(case, strings):
    params = array(case["params"], strings)
    indices = array(case["indices"], strings)
    if case["op"] == "gather":
        return ng.gather(params, indices, axis=case["axis"], batch_dims=case["batch_dims"])
    return ng.gather_nd(params, indices, batch_dims=case["batch_dims"])


def numbers(text):
    return [int(x) for x in re.findall(r"-?\d+", text)]


def same_bad_row_as_tf(case, tf, ours):
    """gather_nd with batch_dims > 0: TF names a longer vector (batch coordinates
    prepended) at a flattened position; ours names the caller's vector. Same row?"""
    m_tf = re.match(r"indices(\[[\d,]*\])? = \[([^\]]*)\] does not index", tf)
    m_ours = re.match(r"indices(\[[\d,]*\])? = \[([^\]]*)\] does not index", ours)
    assert m_tf and m_ours, (tf, ours)
    bd = case["batch_dims"]
    rows_shape = case["indices"]["shape"][:-1]
    tf_values, our_values = numbers(m_tf.group(2)), numbers(m_ours.group(2))
    tf_pos, our_pos = numbers(m_tf.group(1) or ""), numbers(m_ours.group(1) or "")
    tf_shape = [int(np.prod(rows_shape[:bd]))] + rows_shape[bd:]
    flat = lambda pos, shape: int(np.ravel_multi_index(pos, shape)) if pos else 0
    assert tf_values[bd:] == our_values, (tf, ours)
    assert flat(tf_pos, tf_shape) == flat(our_pos, rows_shape), (tf, ours)


CASE_LIST = load()


def test_file_holds_every_case():
    assert len(CASE_LIST) == 1526


@pytest.mark.parametrize("strings", ["object", "S"])
def test_every_tensorflow_case(strings):
    failures = []
    for case in CASE_LIST:
        try:
            check(case, strings)
        except AssertionError as e:
            failures.append(f"{case['id']}: {e}")
    assert not failures, f"{len(failures)} cases fail:\n" + "\n".join(failures[:30])


def check(case, strings):
    try:
        out = run(case, strings)
    except ng.InvalidArgumentError as e:
        tf = case["error"]
        assert tf is not None, f"expected a result, got {e}"
        ours = str(e)
        reports_value = " is not in [0, " in tf or "does not index into param shape" in tf
        if case["op"] == "gather_nd" and case["batch_dims"] > 0 and reports_value:
            same_bad_row_as_tf(case, tf, ours)
        elif tf.startswith("Input to reshape is a tensor with"):
            assert ours.startswith("params.shape["), ours
        else:
            assert ours == tf, f"TF: {tf!r} ours: {ours!r}"
        return
    assert case["error"] is None, f"expected an error {case['error']!r}, got {out!r}"
    expected = array(case["expected"], strings)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    assert out.dtype == params_dtype(case, strings), (out.dtype, expected.dtype)
    if out.dtype == object:
        assert out.tolist() == expected.tolist()
    else:
        assert out.tobytes() == expected.astype(out.dtype).tobytes(), (out, expected)


def params_dtype(case, strings):
    return array(case["params"], strings).dtype


def test_the_checker_catches_a_wrong_value_and_a_wrong_message():
    case = dict(CASE_LIST[3])
    wrong = dict(case["expected"], data=[0.0] + case["expected"]["data"][1:])
    with pytest.raises(AssertionError):
        check(dict(case, expected=wrong), "object")
    bad = next(c for c in CASE_LIST if c["error"] and " is not in [0, " in c["error"])
    with pytest.raises(AssertionError):
        check(dict(bad, error=bad["error"].replace("is not in", "is outside")), "object")
