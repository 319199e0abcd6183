//! A deliberately simple reference implementation of gather and gather_nd: one output
//! element at a time, straight from the documented formulas, with no flattening, no plan and
//! no shared code with the library. Errors are reduced to what they must agree on.

use ndarray::{ArrayD, Dimension, IxDyn};
use ndgather::BadIndices;

/// What a reference call can report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefError {
    /// A bad gather index: its position in indices and its value.
    BadIndex(Vec<usize>, i64),
    /// A bad gather_nd index vector: its position in indices.shape[:-1] and its values.
    BadIndexVector(Vec<usize>, Vec<i64>),
}

/// The policy applied to one index of a dimension of size `dim`.
pub fn resolve(policy: BadIndices, v: i64, dim: usize) -> Option<usize> {
    let d = dim as i64;
    if (0..d).contains(&v) {
        return Some(v as usize);
    }
    match policy {
        BadIndices::Error | BadIndices::Ignore | BadIndices::Fill => None,
        BadIndices::Clamp => (d > 0).then(|| v.clamp(0, d - 1) as usize),
        BadIndices::Negative => (v < 0 && v + d >= 0).then(|| (v + d) as usize),
        BadIndices::Wrap => (d > 0).then(|| v.rem_euclid(d) as usize),
    }
}

/// What fills the slice of a bad index: `T::default()` under `Ignore`, JAX's fill value
/// under `Fill` (for the types the tests use; written out here, apart from the library's).
pub fn fill<T: Clone + Default + 'static>(policy: BadIndices) -> T {
    use num_complex::Complex64;
    use std::any::Any;
    if policy != BadIndices::Fill {
        return T::default();
    }
    let mut slot = T::default();
    let any = &mut slot as &mut dyn Any;
    if let Some(v) = any.downcast_mut::<i64>() {
        *v = i64::MIN;
    } else if let Some(v) = any.downcast_mut::<i32>() {
        *v = i32::MIN;
    } else if let Some(v) = any.downcast_mut::<u8>() {
        *v = u8::MAX;
    } else if let Some(v) = any.downcast_mut::<u32>() {
        *v = u32::MAX;
    } else if let Some(v) = any.downcast_mut::<f32>() {
        *v = f32::NAN;
    } else if let Some(v) = any.downcast_mut::<f64>() {
        *v = f64::NAN;
    } else if let Some(v) = any.downcast_mut::<bool>() {
        *v = true;
    } else if let Some(v) = any.downcast_mut::<Complex64>() {
        *v = Complex64::new(f64::NAN, 0.0);
    }
    slot
}

/// Whether a bad index is an error under `policy`.
fn errors(policy: BadIndices) -> bool {
    !matches!(policy, BadIndices::Ignore | BadIndices::Fill)
}

fn all_positions(shape: &[usize]) -> Vec<Vec<usize>> {
    ndarray::indices(IxDyn(shape))
        .into_iter()
        .map(|ix| ix.slice().to_vec())
        .collect()
}

/// gather with normalised `axis` and `batch_dims` (valid ones; shape errors are the shape
/// rule's business).
pub fn gather<T: Clone + Default + 'static>(
    params: &ArrayD<T>,
    indices: &ArrayD<i64>,
    axis: usize,
    batch_dims: usize,
    policy: BadIndices,
) -> Result<ArrayD<T>, RefError> {
    let (ps, is) = (params.shape(), indices.shape());
    let mut out_shape = ps[..axis].to_vec();
    out_shape.extend_from_slice(&is[batch_dims..]);
    out_shape.extend_from_slice(&ps[axis + 1..]);
    let out_len: usize = out_shape.iter().product();
    if out_len > 0 && errors(policy) {
        for pos in all_positions(is) {
            let v = indices[IxDyn(&pos)];
            if resolve(policy, v, ps[axis]).is_none() {
                return Err(RefError::BadIndex(pos, v));
            }
        }
    }
    let k = is.len() - batch_dims;
    let data = all_positions(&out_shape)
        .into_iter()
        .map(|o| {
            let mut ipos = o[..batch_dims].to_vec();
            ipos.extend_from_slice(&o[axis..axis + k]);
            match resolve(policy, indices[IxDyn(&ipos)], ps[axis]) {
                Some(g) => {
                    let mut ppos = o[..axis].to_vec();
                    ppos.push(g);
                    ppos.extend_from_slice(&o[axis + k..]);
                    params[IxDyn(&ppos)].clone()
                }
                None => fill::<T>(policy),
            }
        })
        .collect();
    Ok(ArrayD::from_shape_vec(IxDyn(&out_shape), data).unwrap())
}

/// gather_nd with valid shapes and `batch_dims`.
pub fn gather_nd<T: Clone + Default + 'static>(
    params: &ArrayD<T>,
    indices: &ArrayD<i64>,
    batch_dims: usize,
    policy: BadIndices,
) -> Result<ArrayD<T>, RefError> {
    let (ps, is) = (params.shape(), indices.shape());
    let depth = is[is.len() - 1];
    let rows_shape = &is[..is.len() - 1];
    let mut out_shape = rows_shape.to_vec();
    out_shape.extend_from_slice(&ps[batch_dims + depth..]);
    let vector = |row: &[usize]| -> Vec<i64> {
        (0..depth)
            .map(|c| {
                let mut p = row.to_vec();
                p.push(c);
                indices[IxDyn(&p)]
            })
            .collect()
    };
    let out_len: usize = out_shape.iter().product();
    if out_len > 0 && errors(policy) {
        for row in all_positions(rows_shape) {
            let v = vector(&row);
            if v.iter()
                .enumerate()
                .any(|(c, &x)| resolve(policy, x, ps[batch_dims + c]).is_none())
            {
                return Err(RefError::BadIndexVector(row, v));
            }
        }
    }
    let data = all_positions(&out_shape)
        .into_iter()
        .map(|o| {
            let row = &o[..rows_shape.len()];
            let v = vector(row);
            let resolved: Option<Vec<usize>> = v
                .iter()
                .enumerate()
                .map(|(c, &x)| resolve(policy, x, ps[batch_dims + c]))
                .collect();
            match resolved {
                Some(r) => {
                    let mut ppos = row[..batch_dims].to_vec();
                    ppos.extend(r);
                    ppos.extend_from_slice(&o[rows_shape.len()..]);
                    params[IxDyn(&ppos)].clone()
                }
                None => fill::<T>(policy),
            }
        })
        .collect();
    Ok(ArrayD::from_shape_vec(IxDyn(&out_shape), data).unwrap())
}
