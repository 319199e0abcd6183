//! Outputs given back for reuse: a fresh output's memory costs page faults and zeroing by the
//! OS, often more than the gather itself (BENCHMARKS.md, "Measurements behind the code"). A front
//! end that knows when an output dies (the Python package, whose arrays it owns) gives the
//! buffer back with [`recycle`], and the next fresh output of the same element type and about
//! the same size is written into it: memory already mapped, as a caller's buffer in
//! `gather_into` is.
//!
//! The pool holds at most [`MAX_BUFFERS`] buffers and [`recycle_limit`] bytes, the most
//! recently given first; buffers under [`MIN_BYTES`] are left to the allocator, which reuses
//! small blocks itself.
//!
//! A process made by `fork` starts a pool of its own once told ([`after_fork_in_child`]): the
//! parent's lock may have been held, at the moment of the fork, by a thread that the fork did
//! not copy, and would then stay held in the child for good.

use ndarray::{ArrayBase, Dimension, OwnedRepr};
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

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
}

/// The most bytes kept: [`recycle_limit`]. Not in the pool's lock, so that a forked child
/// keeps its parent's setting.
static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_LIMIT);
/// How many forks lie between this process and the first: copied by each fork and raised by
/// one in the child by [`after_fork_in_child`].
static FORK_DEPTH: AtomicUsize = AtomicUsize::new(0);
/// Processes forked deeper than this keep no buffers.
const DEEPEST_FORK: usize = 16;
/// One pool per fork depth: a process uses the slot of its own depth, which none of its
/// ancestors (all shallower) has touched, so the fork copied its lock free.
static POOLS: [Mutex<Pool>; DEEPEST_FORK + 1] = [const {
    Mutex::new(Pool {
        buffers: Vec::new(),
    })
}; DEEPEST_FORK + 1];

/// This process's pool, locked; `None` in a process forked deeper than [`DEEPEST_FORK`].
fn pool() -> Option<MutexGuard<'static, Pool>> {
    let slot = POOLS.get(FORK_DEPTH.load(Ordering::Relaxed))?;
    // The pool's state is valid after any panic (each change is one push or remove).
    Some(slot.lock().unwrap_or_else(|e| e.into_inner()))
}

impl Pool {
    /// Takes out the oldest buffers until the pool is within its limits; the caller drops
    /// them once the lock is released (freeing memory is a system call).
    #[must_use]
    fn trim(&mut self) -> Vec<Buffer> {
        let limit = LIMIT.load(Ordering::Relaxed);
        let mut total: usize = self.buffers.iter().map(|b| b.bytes).sum();
        let mut over = 0;
        while total > limit || self.buffers.len() - over > MAX_BUFFERS {
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
/// ndgather::memory::recycle(out);
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
    let Some(mut pool) = pool() else { return };
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
    let mut pool = pool()?;
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

/// Tells ndgather that this process was just made by `fork`, before it makes any call: from
/// then on it keeps its given-back buffers ([`recycle`]) in a pool of its own, leaving the
/// parent's aside untouched, as another thread of the parent may have held its lock at the
/// moment of the fork (a thread the fork did not copy, so the lock would never be released).
/// A process forked more than 16 times deep keeps no buffers.
///
/// For a program that forks while other threads may be calling ndgather: call it first thing
/// in the child (a `pthread_atfork` child handler; the Python package does so from
/// `os.register_at_fork`). The child must also run its calls in a rayon pool it builds
/// itself: the parent's pools have no threads there.
///
/// ```
/// // In a child just made by fork (here, for the example, in the only process):
/// ndgather::memory::after_fork_in_child();
/// let params = ndarray::Array2::<f32>::ones((1 << 20, 4));
/// let indices = ndarray::Array1::from_iter(0..1i64 << 20);
/// let out = ndgather::gather(&params, &indices).unwrap();
/// let address = out.as_ptr();
/// ndgather::memory::recycle(out);
/// // Kept in the child's own pool, and found there again.
/// assert_eq!(ndgather::gather(&params, &indices).unwrap().as_ptr(), address);
/// ```
pub fn after_fork_in_child() {
    FORK_DEPTH.fetch_add(1, Ordering::Relaxed);
}

/// Sets the most bytes of given-back buffers ndgather keeps, and returns the previous limit;
/// `0` turns reuse off and frees every kept buffer.
///
/// ```
/// let before = ndgather::memory::set_recycle_limit(0);
/// assert_eq!(ndgather::memory::recycle_limit(), 0);
/// ndgather::memory::set_recycle_limit(before);
/// ```
pub fn set_recycle_limit(bytes: usize) -> usize {
    let before = LIMIT.swap(bytes, Ordering::Relaxed);
    if let Some(mut pool) = pool() {
        let dropped = pool.trim();
        drop(pool);
        drop(dropped);
    }
    before
}

/// The most bytes of given-back buffers ndgather keeps (1 GiB unless set by
/// [`set_recycle_limit`]).
pub fn recycle_limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// Held by each unit test that reads back what it gave the pool, or that fills or empties
/// the pool: the pool is process-wide and the tests run on parallel threads, so a test that
/// fills it (dropping the oldest buffers) or sets the limit to 0 would otherwise drop another
/// test's buffer between its `give_back` and its `take`.
#[cfg(test)]
pub(crate) fn pool_test_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool is process-wide: one test walks through its rules in order.
    #[test]
    fn keeps_large_buffers_of_the_right_type_within_its_limits() {
        let _alone = pool_test_lock();
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
        assert_eq!(kept(&pool().unwrap()), MAX_BUFFERS);
        assert!(take::<Probe>(elems).is_none(), "the oldest were dropped");
        // A limit of 0 drops everything.
        let before = set_recycle_limit(0);
        assert_eq!(kept(&pool().unwrap()), 0);
        recycle(buffer(elems));
        assert!(take::<Probe>(elems).is_none());
        set_recycle_limit(before);
    }

    /// A child made by `fork` while another thread held the pool's lock keeps and finds its
    /// buffers all the same, in a pool of its own; without `after_fork_in_child` it would wait
    /// forever for that thread, which the fork did not copy.
    #[cfg(target_os = "linux")]
    #[test]
    #[allow(unsafe_code)] // `fork`, `waitpid`, `kill` and `_exit`: there is no safe form.
    fn a_forked_child_keeps_buffers_though_a_thread_left_behind_held_the_lock() {
        use std::sync::mpsc;
        use std::time::{Duration, Instant};
        /// A type no other test allocates.
        #[derive(Clone, Copy, Default)]
        struct Forked(#[allow(dead_code)] u8);

        let (held, is_held) = mpsc::channel();
        let (release, is_released) = mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let guard = pool();
            held.send(()).unwrap();
            is_released.recv().ok();
            drop(guard);
        });
        is_held.recv().unwrap();
        // SAFETY: `fork` has no preconditions. The child calls only this module's functions
        // (which allocate: glibc's allocator is made ready for the child by `fork`) and
        // `_exit`, so it runs no exit handlers and touches no state of the test harness.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            after_fork_in_child();
            recycle(ndarray::Array1::from_elem(MIN_BYTES, Forked(1)));
            let found = take::<Forked>(MIN_BYTES).is_some();
            // SAFETY: ends the child at once, as above.
            unsafe { libc::_exit(if found { 0 } else { 1 }) };
        }
        assert!(pid > 0, "fork failed");
        release.send(()).unwrap();
        holder.join().unwrap();
        let (mut status, start) = (0, Instant::now());
        // SAFETY: `pid` is this process's child, and `status` a valid place to write.
        while unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == 0 {
            if start.elapsed() > Duration::from_secs(20) {
                // SAFETY: as above; the child is killed, then reaped.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                panic!("the forked child hung on the lock a thread left behind held");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(libc::WIFEXITED(status), "the child died: status {status}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "the child found no buffer");
    }
}
