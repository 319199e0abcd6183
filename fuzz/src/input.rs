//! Decoding fuzz bytes into a call: shapes, options and index values, with a bias towards
//! the hostile (extreme axis and batch_dims, huge dimensions, indices at their type's limits).

use ndgather::BadIndices;

pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    pub fn dim(&mut self) -> usize {
        match self.byte() {
            250 => usize::MAX / 3,
            251 => 1 << 40,
            b => (b % 6) as usize,
        }
    }

    pub fn shape(&mut self, max_rank: u8) -> Vec<usize> {
        let rank = self.byte() % (max_rank + 1);
        (0..rank).map(|_| self.dim()).collect()
    }

    pub fn small_int(&mut self) -> i64 {
        match self.byte() {
            250 => i64::MIN,
            251 => i64::MAX,
            252 => i64::MIN + 1,
            b => (b % 11) as i64 - 5,
        }
    }

    pub fn index(&mut self) -> i64 {
        match self.byte() {
            250 => i64::MIN,
            251 => i64::MAX,
            252 => i32::MAX as i64 + 1,
            253 => -1,
            b => (b % 8) as i64,
        }
    }

    pub fn policy(&mut self) -> BadIndices {
        BadIndices::ALL[self.byte() as usize % BadIndices::ALL.len()]
    }
}

/// An array of a shape whose element count is reasonable, else `None`.
pub fn small_array<T>(shape: &[usize], f: impl FnMut(usize) -> T) -> Option<ndarray::ArrayD<T>> {
    let n = ndgather::shape::checked_numel(shape)?;
    if n > 4096 {
        return None;
    }
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), (0..n).map(f).collect()).ok()
}
