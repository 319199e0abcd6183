//! Arrays of the committed case files: `{"dtype", "shape", "data"}` objects, or `{"dtype",
//! "shape", "hex"}` (little-endian bytes) and `{"dtype", "shape", "strings"}`.

use ndarray::{ArrayD, IxDyn};
use ndgather::embedding::Real;
use ndgather::{DType, Strings, Tensor};
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
    let data = data.map(|x| T::narrow(num_traits::cast(x.as_f64().unwrap()).unwrap()));
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

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|k| u8::from_str_radix(&s[k..k + 2], 16).unwrap())
        .collect()
}

/// A case file's array as a tensor (the file's bytes are little-endian, as this machine's).
pub fn tensor(v: &Value) -> Tensor {
    let shape = shape(v);
    if let Some(strings) = v["strings"].as_array() {
        let strings: Vec<String> = strings
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        return Tensor::from(Strings::from(
            ArrayD::from_shape_vec(IxDyn(&shape), strings).unwrap(),
        ));
    }
    let dtype = DType::from_name(v["dtype"].as_str().unwrap()).unwrap();
    Tensor::from_bytes(dtype, &shape, &hex(v["hex"].as_str().unwrap())).unwrap()
}

/// Equal bit for bit (NaNs included); strings equal.
pub fn same(a: &Tensor, b: &Tensor) -> bool {
    match (a.to_bytes(), b.to_bytes()) {
        (Ok(x), Ok(y)) => a.dtype() == b.dtype() && a.shape() == b.shape() && x == y,
        _ => a == b,
    }
}
