//! Shape rules on partially known shapes, as TensorFlow's shape functions (and more precise
//! where the known parts allow).

use ndgather::shape::{gather_nd_shape, gather_shape, Axis, Shape};
use ndgather::Error;

fn s(text: &str) -> Shape {
    if text == "?" {
        return Shape::unknown();
    }
    let inner = text.trim_matches(|c| c == '[' || c == ']');
    if inner.is_empty() {
        return Shape::from_dims(vec![]);
    }
    Shape::from_dims(inner.split(',').map(|d| d.trim().parse().ok()).collect())
}

fn g(p: &str, i: &str, axis: Axis, bd: i64) -> String {
    match gather_shape(&s(p), &s(i), axis, bd, None) {
        Ok(r) => r.output.to_string(),
        Err(e) => format!("error: {e}"),
    }
}

fn nd(p: &str, i: &str, bd: i64) -> String {
    match gather_nd_shape(&s(p), &s(i), bd, None) {
        Ok(r) => r.output.to_string(),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn gather_with_unknown_dimensions() {
    // A placeholder [?, 2] gathered by indices [5, 1].
    assert_eq!(g("[?,2]", "[5,1]", Axis::Given(0), 0), "[5,1,2]");
    assert_eq!(g("[?,2]", "[5,1]", Axis::Default, 0), "[5,1,2]");
    // testUnknownIndices: indices of unknown shape.
    assert_eq!(g("[3,4]", "?", Axis::Given(0), 0), "<unknown>");
    // testUnknownAxis: axis not known, ranks known.
    assert_eq!(g("[3,4]", "[2]", Axis::Unknown, 0), "[?,?]");
    assert_eq!(g("[3,4,5]", "[2]", Axis::Unknown, 0), "[?,?,?]");
    assert_eq!(g("[?,?,?]", "[?]", Axis::Unknown, 0), "[?,?,?]");
    assert_eq!(g("?", "[2]", Axis::Unknown, 0), "<unknown>");
    // Batch dimensions come from indices where params does not know them.
    assert_eq!(g("[?,5]", "[3,2]", Axis::Given(1), 1), "[3,2]");
    // Negative axis with unknown rank leaves the output unknown.
    assert_eq!(g("?", "[2]", Axis::Given(-1), 0), "<unknown>");
    assert_eq!(g("?", "[2]", Axis::Given(0), 0), "<unknown>");
}

#[test]
fn gather_errors_found_statically() {
    assert_eq!(
        g("[2,3]", "[?]", Axis::Given(2), 0),
        "error: Shape must be at least rank 3 but is rank 2"
    );
    assert_eq!(
        g("[]", "?", Axis::Given(0), 0),
        "error: params must be at least 1 dimensional"
    );
    assert_eq!(
        g("[2,?]", "[3,?]", Axis::Given(1), 1),
        "error: params.shape[0]: 2 should be equal to indices.shape[0]: 3"
    );
    // Unknown sizes cannot mismatch.
    assert_eq!(g("[?,4]", "[3,2]", Axis::Given(1), 1), "[3,2]");
    assert_eq!(
        g("[2,3]", "[2,1]", Axis::Given(0), 1),
        "error: batch_dims (1) must be less than or equal to axis (0)."
    );
    assert_eq!(
        g("[2,3]", "[2]", Axis::Given(1), 2),
        "error: Expected batch_dims in the range [-1, 1], but got 2"
    );
    let limit = gather_shape(
        &s("[40000]"),
        &s("[1]"),
        Axis::Given(0),
        0,
        <i16 as ndgather::IndexType>::TF_LIMIT,
    );
    assert!(matches!(limit, Err(Error::IndexTypeTooSmall { .. })));
}

#[test]
fn gather_nd_with_unknown_dimensions() {
    assert_eq!(nd("[?,3]", "[5,1]", 0), "[5,3]");
    assert_eq!(nd("[?,?]", "[5,2]", 0), "[5]");
    // Unknown depth or params rank: unknown output.
    assert_eq!(nd("[4,3]", "[5,?]", 0), "<unknown>");
    assert_eq!(nd("?", "[5,1]", 0), "<unknown>");
    assert_eq!(nd("[?,?,?]", "[?,?,1]", 1), "[?,?,?]");
    assert_eq!(nd("[5,?,3]", "[?,2,1]", 1), "[5,2,3]");
}

#[test]
fn gather_nd_errors_found_statically() {
    assert_eq!(
        nd("[2,3]", "[4,3]", 0),
        "error: index innermost dimension length must be <= params rank; saw: 3 vs. 2"
    );
    assert_eq!(
        nd("[?]", "[]", 0),
        "error: indices must be at least a vector"
    );
    assert_eq!(nd("[0,?]", "[2,1]", 0), "[2,?]");
    assert_eq!(
        nd("[0,3]", "[2,1]", 0),
        "error: Requested more than 0 entries, but params is empty.  Params shape: [0,3]"
    );
    assert_eq!(
        nd("[2,3]", "[3,1]", -1),
        "error: tf.gather_nd does not allow negative batch_dims."
    );
    assert_eq!(
        nd("[2,3]", "[3,1]", 1),
        "error: params.shape[0]: 2 should be equal to indices.shape[0]: 3"
    );
}
