//! Outputs given back for reuse: a fresh output's memory costs page faults and zeroing by the
//! OS (on this project's machine, 2–30 ms per 100 MB, more than the gather itself). A front
//! end that knows when an output dies (the Python package, whose arrays it owns) gives the
//! buffer back with [`recycle`], and the next fresh output of the same element type and about
//! the same size is written into it: memory already mapped, as a caller's buffer in
//! `gather_into` is.
//!
//! The pool holds at most [`MAX_BUFFERS`] buffers and [`recycle_limit`] bytes, the most
//! recently given first; buffers under [`MIN_BYTES`] are left to the allocator, which reuses
//! small blocks itself.

use ndarray::{ArrayBase, Dimension, OwnedRepr};
use std::any::Any;
use std::sync::Mutex;

/// Buffers smaller than this are not kept (the allocator recycles blocks this small itself).
pub(crate) const MIN_BYTES: usize = 4 << 20;
/// At most this many buffers are kept.
pub(crate) const MAX_BUFFERS: usize = 4;
/// The default of [`recycle_limit`]: 1 GiB.
pub(crate) const DEFAULT_LIMIT: usize = 1 << 30;

struct Buffer {
    /// Its capacity in bytes (what the limit counts, whatever the element type).
    bytes: usize,
    /// A `Vec<T>` of length 0: its type and capacity say which outputs it fits.
    vec: Box<dyn Any + Send>,
}

struct Pool {
    buffers: Vec<Buffer>,
    limit: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    buffers: Vec::new(),
    limit: DEFAULT_LIMIT,
});

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    // The pool's state is valid after any panic (each change is one push or remove).
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pool {
    /// Takes out the oldest buffers until the pool is within its limits; the caller drops
    /// them once the lock is released (freeing memory is a system call).
    #[must_use]
    fn trim(&mut self) -> Vec<Buffer> {
        let mut total: usize = self.buffers.iter().map(|b| b.bytes).sum();
        let mut over = 0;
        while total > self.limit || self.buffers.len() - over > MAX_BUFFERS {
            total -= self.buffers[over].bytes;
            over += 1;
        }
        self.buffers.drain(..over).collect()
    }
}

/// Gives an array's memory back to ndgather for a later fresh output (of any shape with
/// about as many elements of `T`); its values are dropped. ndgather keeps at most 4 such
/// buffers and [`recycle_limit`] bytes (1 GiB unless set), dropping the oldest first; arrays
/// under 4 MiB are simply dropped (the allocator reuses blocks that small itself).
///
/// The Python package gives back every output array it made when NumPy frees it.
///
/// ```
/// use ndarray::{Array1, Array2};
///
/// let params = Array2::<f32>::ones((1 << 20, 4));
/// let indices = Array1::from_iter(0..1i64 << 20);
/// let out = ndgather::gather(&params, &indices).unwrap();
/// let address = out.as_ptr();
/// ndgather::recycle(out);
/// // The next output of the same size is written into the same memory.
/// let again = ndgather::gather(&params, &indices).unwrap();
/// assert_eq!(again.as_ptr(), address);
/// assert_eq!(again, params.into_dyn());
/// ```
pub fn recycle<T: Send + 'static, D: Dimension>(array: ArrayBase<OwnedRepr<T>, D>) {
    give_back(array.into_raw_vec_and_offset().0);
}

/// Keeps a vector's memory for a later fresh output, as [`recycle`] does an array's.
pub(crate) fn give_back<T: Send + 'static>(mut vec: Vec<T>) {
    let bytes = vec.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes < MIN_BYTES {
        return;
    }
    vec.clear();
    let mut pool = pool();
    pool.buffers.push(Buffer {
        bytes,
        vec: Box::new(vec),
    });
    let dropped = pool.trim();
    drop(pool);
    drop(dropped);
}

/// A kept buffer of `T` with room for `len` elements and at most a quarter more (empty), if
/// there is one: the most recently given.
pub(crate) fn take<T: 'static>(len: usize) -> Option<Vec<T>> {
    if len.saturating_mul(std::mem::size_of::<T>()) < MIN_BYTES {
        return None;
    }
    let mut pool = pool();
    let fits = |b: &Buffer| {
        b.vec
            .downcast_ref::<Vec<T>>()
            .is_some_and(|v| (len..=len + len / 4).contains(&v.capacity()))
    };
    let at = pool.buffers.iter().rposition(fits)?;
    let buffer = pool.buffers.remove(at);
    drop(pool);
    buffer.vec.downcast::<Vec<T>>().ok().map(|v| *v)
}

/// Holds the lock on ndgather's kept buffers (see [`recycle`]) until it is dropped; every
/// other thread's fresh output waits for it meanwhile.
///
/// For a program that calls `fork` while other threads may be gathering: take it just
/// before the fork and drop it just after, in the parent and in the child alike (as
/// `pthread_atfork` handlers, or Python's `os.register_at_fork`). `fork` copies a lock as it
/// is, and one that another thread held at that moment would stay held in the child for
/// good, as that thread is not copied. The child must also run its calls in a rayon pool
/// that it builds itself: the parent's pools have no threads there.
///
/// ```
/// let guard = ndgather::hold_for_fork();
/// // ... fork here ...
/// drop(guard);
/// assert_eq!(ndgather::recycle_limit(), 1 << 30);
/// ```
pub fn hold_for_fork() -> ForkGuard {
    ForkGuard(pool())
}

/// The lock on ndgather's kept buffers, held until dropped: see [`hold_for_fork`].
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct ForkGuard(#[allow(dead_code)] std::sync::MutexGuard<'static, Pool>);

/// Sets the most bytes of given-back buffers ndgather keeps, and returns the previous limit;
/// `0` turns reuse off and frees every kept buffer.
///
/// ```
/// let before = ndgather::set_recycle_limit(0);
/// assert_eq!(ndgather::recycle_limit(), 0);
/// ndgather::set_recycle_limit(before);
/// ```
pub fn set_recycle_limit(bytes: usize) -> usize {
    let mut pool = pool();
    let before = std::mem::replace(&mut pool.limit, bytes);
    let dropped = pool.trim();
    drop(pool);
    drop(dropped);
    before
}

/// The most bytes of given-back buffers ndgather keeps (1 GiB unless set by
/// [`set_recycle_limit`]).
pub fn recycle_limit() -> usize {
    pool().limit
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool is process-wide: one test walks through its rules in order.
    #[test]
    fn keeps_large_buffers_of_the_right_type_within_its_limits() {
        /// A type no other test allocates, so that concurrent tests take none of these
        /// buffers.
        #[derive(Clone, Copy, Default)]
        struct Probe(#[allow(dead_code)] f32);
        let elems = MIN_BYTES / 4;
        let buffer = |len: usize| ndarray::Array1::from_elem(len, Probe(1.0));
        // Too small: not kept.
        recycle(buffer(elems - 1));
        assert!(take::<Probe>(elems - 1).is_none());
        // Kept for the same type and about the same size only.
        let a = buffer(elems * 5 / 4);
        let address = a.as_ptr();
        recycle(a);
        assert!(take::<u32>(elems).is_none(), "another type");
        assert!(take::<Probe>(elems * 2).is_none(), "too small");
        recycle(buffer(elems * 3));
        assert!(take::<Probe>(elems * 2).is_none(), "too large");
        let v = take::<Probe>(elems).expect("a kept buffer");
        assert_eq!((v.as_ptr(), v.len()), (address.cast(), 0));
        assert!(take::<Probe>(elems).is_none(), "taken once");
        // At most MAX_BUFFERS, the oldest dropped first.
        for k in 1..=MAX_BUFFERS + 2 {
            recycle(buffer(elems * k));
        }
        let kept = |pool: &Pool| {
            pool.buffers
                .iter()
                .filter(|b| b.vec.is::<Vec<Probe>>())
                .count()
        };
        assert_eq!(kept(&pool()), MAX_BUFFERS);
        assert!(take::<Probe>(elems).is_none(), "the oldest were dropped");
        // A limit of 0 drops everything.
        let before = set_recycle_limit(0);
        assert_eq!(kept(&pool()), 0);
        recycle(buffer(elems));
        assert!(take::<Probe>(elems).is_none());
        set_recycle_limit(before);
    }

    #[test]
    fn the_fork_guard_holds_the_pools_lock_until_dropped() {
        let guard = hold_for_fork();
        assert!(matches!(
            POOL.try_lock(),
            Err(std::sync::TryLockError::WouldBlock)
        ));
        drop(guard);
        // Released: this would wait forever otherwise.
        drop(pool());
    }
}
