//! The memory of direct NIO buffers, read (and written) where it lies: the crate's `unsafe`
//! code, each block beside its proof, and the locks that keep runs' reads and writes of one
//! piece of memory apart.
//!
//! The locks are kept by address range, for the whole process ([`RANGES`]), not per tensor:
//! two tensors over the same memory (two wraps of one buffer, or of overlapping slices) share
//! them, so a run writing through one never races a run reading through the other.

use super::{Failure, Result};
use jni::objects::{GlobalRef, JByteBuffer};
use jni::JNIEnv;
use std::sync::{Mutex, PoisonError};

/// One access to memory in progress: bytes `start..end`, written or only read.
struct Access {
    id: u64,
    start: usize,
    end: usize,
    write: bool,
}

/// The accesses in progress, and the id of the next one.
struct Ranges {
    next: u64,
    held: Vec<Access>,
}

/// Every access of a run to a direct buffer's memory, in progress. Its critical sections
/// only push or remove an entry, so a panic cannot leave it half-changed and a poisoned lock
/// is taken over as it stands.
static RANGES: Mutex<Ranges> = Mutex::new(Ranges {
    next: 0,
    held: Vec::new(),
});

/// An access to `len` bytes at `start`, held until dropped (on every path, unwinding from a
/// panic included, so that memory is never left "busy").
pub(crate) struct RangeGuard {
    id: u64,
}

impl RangeGuard {
    /// Begins an access, or refuses it while one that conflicts is in progress: a write
    /// conflicts with any access to a byte it covers, a read with a write.
    pub(crate) fn acquire(start: usize, len: usize, write: bool) -> Result<RangeGuard> {
        let end = start.saturating_add(len);
        let mut ranges = RANGES.lock().unwrap_or_else(PoisonError::into_inner);
        // No byte, no conflict: an empty buffer's address may be any other's.
        let conflict = start < end
            && ranges
                .held
                .iter()
                .any(|a| (write || a.write) && a.start < a.end && a.start < end && start < a.end);
        if conflict {
            // Busy is the memory's state, not a bad argument: the same call succeeds once the
            // other run ends, so callers must be able to tell it apart.
            return Err(Failure::State(
                "the tensor's buffer is in use by another run (being written by a run, or read \
                 while a run writes it): retry once that run ends, or synchronize the runs that \
                 share this memory"
                    .into(),
            ));
        }
        let id = ranges.next;
        ranges.next += 1;
        ranges.held.push(Access {
            id,
            start,
            end,
            write,
        });
        Ok(RangeGuard { id })
    }
}

impl Drop for RangeGuard {
    fn drop(&mut self) {
        let mut ranges = RANGES.lock().unwrap_or_else(PoisonError::into_inner);
        ranges.held.retain(|a| a.id != self.id);
    }
}

fn address(env: &mut JNIEnv<'_>, buffer: &JByteBuffer<'_>) -> Result<(*mut u8, usize)> {
    if buffer.is_null() {
        return Err(Failure::Argument("the buffer must not be null".into()));
    }
    let ptr = env.get_direct_buffer_address(buffer)?;
    let len = env.get_direct_buffer_capacity(buffer)?;
    if ptr.is_null() && len > 0 {
        return Err(Failure::Argument(
            "the buffer must be a direct buffer".into(),
        ));
    }
    if ptr.is_null() {
        return Ok((std::ptr::NonNull::dangling().as_ptr(), 0));
    }
    Ok((ptr, len))
}

/// A direct buffer's memory, held by a tensor that reads it (and, for a writable buffer,
/// writes it) where it lies: a `FileChannel.map` table, a caller's output buffer.
pub(crate) struct DirectBuffer {
    /// Keeps the buffer object, and so its memory, alive while the tensor is (the tensor is
    /// freed when its handle is closed and the last native call leasing it has returned).
    _buffer: GlobalRef,
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

// SAFETY: the memory is the buffer's, not any thread's: a direct buffer's memory can be used
// from every thread of the JVM, and the `GlobalRef` is itself `Send + Sync`. Runs reach the
// memory only through `read` and `write`, under the process-wide range locks.
unsafe impl Send for DirectBuffer {}
// SAFETY: as for `Send`: `&DirectBuffer` gives the memory only under a range lock.
unsafe impl Sync for DirectBuffer {}

/// Reading a direct buffer's memory (held while a run reads it).
pub(crate) struct Reading<'b> {
    buffer: &'b DirectBuffer,
    _guard: RangeGuard,
}

/// Writing a direct buffer's memory (held while a run writes it).
pub(crate) struct Writing<'b> {
    buffer: &'b DirectBuffer,
    _guard: RangeGuard,
}

impl DirectBuffer {
    /// Holds `buffer`'s memory; `writable` is Java's `!buffer.isReadOnly()` (a read-only
    /// mapping faults when written).
    pub(crate) fn new(
        env: &mut JNIEnv<'_>,
        buffer: &JByteBuffer<'_>,
        writable: bool,
    ) -> Result<DirectBuffer> {
        let (ptr, len) = address(env, buffer)?;
        Ok(DirectBuffer {
            _buffer: env.new_global_ref(buffer)?,
            ptr,
            len,
            writable,
        })
    }

    /// Whether the two buffers' memory overlaps.
    pub(crate) fn overlaps(&self, other: &DirectBuffer) -> bool {
        let (a, b) = (self.ptr as usize, other.ptr as usize);
        a < b + other.len && b < a + self.len
    }

    /// The memory, for reading; an error while a run writes any of it (through any tensor).
    pub(crate) fn read(&self) -> Result<Reading<'_>> {
        Ok(Reading {
            buffer: self,
            _guard: RangeGuard::acquire(self.ptr as usize, self.len, false)?,
        })
    }

    /// The memory, for writing; an error for a read-only buffer, or while another run reads
    /// or writes any of it (through any tensor).
    pub(crate) fn write(&self) -> Result<Writing<'_>> {
        if !self.writable {
            return Err(Failure::Argument(
                "the output tensor's buffer is read-only".into(),
            ));
        }
        Ok(Writing {
            buffer: self,
            _guard: RangeGuard::acquire(self.ptr as usize, self.len, true)?,
        })
    }
}

impl Reading<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` and `len` are a direct buffer's address and capacity, valid while
        // the buffer object lives, which `_buffer` ensures for as long as the `DirectBuffer`
        // does, and so as long as `self` (the caller contract of a direct buffer: memory is
        // not freed by other means, such as closing the arena of a `MemorySegment`, while a
        // tensor over it is open). The read range lock keeps every run's writes to any of
        // these bytes out while the slice lives, whichever tensor they go through; writes by
        // Java code during a run are the caller's error, as for any buffer shared between
        // threads.
        unsafe { std::slice::from_raw_parts(self.buffer.ptr, self.buffer.len) }
    }
}

impl Writing<'_> {
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `Reading::bytes`; the write range lock makes this the only slice of
        // these bytes that any run holds, through any tensor (a run that writes also checks
        // that none of its own inputs overlaps it, `DirectBuffer::overlaps`, for a clearer
        // message). The buffer is writable (checked in `write`).
        unsafe { std::slice::from_raw_parts_mut(self.buffer.ptr, self.buffer.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Addresses far from one another's tests (and from any real buffer: no memory is read).
    const BASE: usize = 0x7000_0000_0000;

    #[test]
    fn overlapping_ranges_share_one_lock() {
        let a = RangeGuard::acquire(BASE, 100, false);
        assert!(a.is_ok());
        // Another reader of the same bytes is let in; a writer of any of them is not.
        assert!(RangeGuard::acquire(BASE + 50, 100, false).is_ok());
        assert!(RangeGuard::acquire(BASE + 99, 10, true).is_err());
        assert!(RangeGuard::acquire(BASE + 100, 10, true).is_ok());
        drop(a);
        let w = RangeGuard::acquire(BASE, 100, true);
        assert!(w.is_ok());
        assert!(RangeGuard::acquire(BASE + 10, 1, false).is_err());
        assert!(RangeGuard::acquire(BASE + 10, 0, false).is_ok());
        drop(w);
        let empty = RangeGuard::acquire(BASE + 10, 0, true);
        assert!(RangeGuard::acquire(BASE, 100, true).is_ok());
        drop(empty);
    }

    #[test]
    fn busy_memory_is_a_state_error_that_says_to_retry() {
        let at = BASE + 0x2000;
        let _w = RangeGuard::acquire(at, 64, true);
        match RangeGuard::acquire(at, 8, false) {
            Err(Failure::State(m)) => {
                assert!(m.contains("in use by another run") && m.contains("retry"))
            }
            Err(_) => panic!("busy memory gave an error other than a state error"),
            Ok(_) => panic!("a read was let in under a write"),
        }
    }

    #[test]
    fn a_panic_under_the_lock_leaves_the_memory_usable() {
        let at = BASE + 0x1000;
        let outcome = std::panic::catch_unwind(|| {
            let _w = RangeGuard::acquire(at, 64, true);
            panic!("a bug while writing");
        });
        assert!(outcome.is_err());
        assert!(RangeGuard::acquire(at, 64, true).is_ok());
    }
}
