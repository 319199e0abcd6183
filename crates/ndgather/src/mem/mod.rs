//! The memory layer, below every other: fresh outputs ([`output`]), buffers given back for
//! reuse ([`recycle`]), and fixed-width elements seen as units of bytes ([`units`]). It
//! knows no dtype, shape rule or op: an element type tells it what it needs through
//! [`units::Bytes`], which the dtype table implements, and its errors are its own
//! ([`MemError`]), which the crate's error type takes in.

pub(crate) mod output;
pub(crate) mod raw_view;
pub(crate) mod recycle;
pub(crate) mod units;

/// Per-axis values held inline up to rank 4, so reading a geometry allocates nothing.
pub(crate) type Axes<T> = smallvec::SmallVec<[T; 4]>;

/// What the memory layer can fail with; `ndgather::Error` takes each in as its own variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MemError {
    /// A buffer of `shape` (of `what`) would exceed `isize::MAX` bytes.
    TooLarge {
        /// What the buffer is for (`output`, `table`, …).
        what: &'static str,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// The allocator refused `bytes` bytes.
    OutOfMemory {
        /// Bytes asked for.
        bytes: usize,
    },
    /// A copy left a slot of a fresh output unwritten (a kernel's bug, caught in checked
    /// builds).
    Unwritten,
}

/// The number of elements of `shape`; `None` when the product of its nonzero lengths
/// exceeds `isize::MAX` (as ndarray requires, a zero length does not excuse the others from
/// fitting).
pub(crate) fn element_count(shape: &[usize]) -> Option<usize> {
    let mut n: usize = 1;
    let mut zero = false;
    for &d in shape {
        if d == 0 {
            zero = true;
        } else {
            n = n.checked_mul(d)?;
        }
    }
    if n > isize::MAX as usize {
        return None;
    }
    Some(if zero { 0 } else { n })
}
