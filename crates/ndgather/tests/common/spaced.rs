//! Records laid out apart: each element followed by a gap byte, in row-major order. The core's
//! path for small calls reads contiguous records only, so the same elements in this layout
//! take its general path, through the same door.

/// `bytes` (the row-major elements of `shape`, `itemsize` bytes each) with a gap byte after
/// each element, and the byte strides of that layout.
pub fn spaced(bytes: &[u8], shape: &[usize], itemsize: usize) -> (Vec<u8>, Vec<isize>) {
    let (n, gap) = (shape.iter().product::<usize>(), itemsize + 1);
    let mut out = vec![0xEE; n * gap];
    for k in 0..n {
        out[k * gap..k * gap + itemsize].copy_from_slice(&bytes[k * itemsize..(k + 1) * itemsize]);
    }
    let mut strides = vec![0isize; shape.len()];
    let mut step = gap as isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.saturating_mul(d.max(1) as isize);
    }
    (out, strides)
}
