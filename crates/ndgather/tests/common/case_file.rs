//! Arrays of the committed case files: `{"dtype", "shape", "data"}` objects.

use ndarray::{ArrayD, IxDyn};
use ndgather::embedding::Real;
use serde_json::Value;

pub fn shape(v: &Value) -> Vec<usize> {
    v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

/// Floats, written as f64 by the generator, converted to `T`.
pub fn floats<T: Real>(v: &Value) -> ArrayD<T> {
    let data = v["data"].as_array().unwrap().iter();
    let data = data.map(|x| T::from_acc(num_traits::cast(x.as_f64().unwrap()).unwrap()));
    ArrayD::from_shape_vec(IxDyn(&shape(v)), data.collect()).unwrap()
}

pub fn ints(v: &Value) -> ArrayD<i64> {
    let data = v["data"].as_array().unwrap().iter();
    ArrayD::from_shape_vec(
        IxDyn(&shape(v)),
        data.map(|x| x.as_i64().unwrap()).collect(),
    )
    .unwrap()
}
