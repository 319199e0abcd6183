//! Native objects behind Java's `long` handles, and the memory of direct NIO buffers: the
//! crate's `unsafe` code, each block beside its proof.
//!
//! A handle is a `Box<T>` given up to Java ([`into_handle`]); Java keeps it in one field,
//! passes it back only while it is open, and frees it exactly once ([`free`], from `close()`
//! or its `Cleaner`, guarded by an atomic swap to 0). A handle of 0 is a closed object and
//! gives an `IllegalStateException`, never a dereference.

use super::{Failure, Result};
use jni::objects::{GlobalRef, JByteBuffer};
use jni::JNIEnv;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Gives `value` to Java as a handle.
pub(crate) fn into_handle<T>(value: T) -> i64 {
    Box::into_raw(Box::new(value)) as i64
}

/// The object behind an open handle of type `T`.
pub(crate) fn borrow<'a, T>(handle: i64) -> Result<&'a T> {
    if handle == 0 {
        return Err(Failure::State(
            "the object was closed (or never created): use it before close()".into(),
        ));
    }
    // SAFETY: a non-zero handle comes from `into_handle::<T>` (Java keeps each handle in a
    // field of the class that wraps a `T`, and passes each only where a `T` is expected),
    // and it is not freed while Java passes it: Java frees it once, after swapping its field
    // to 0, so no later call sees it. Shared references only: the objects are used through
    // `&self` (a `Scope`'s graph is behind its own mutex).
    Ok(unsafe { &*(handle as *const T) })
}

/// Frees the object behind a handle (0: nothing).
pub(crate) fn free<T>(handle: i64) -> Result<()> {
    if handle != 0 {
        // SAFETY: as in `borrow`; Java calls this once per handle, after which it never
        // passes it again, so the box is dropped exactly once.
        drop(unsafe { Box::from_raw(handle as *mut T) });
    }
    Ok(())
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
    /// Keeps the buffer object, and so its memory, alive while the tensor is open.
    _buffer: GlobalRef,
    ptr: *mut u8,
    len: usize,
    writable: bool,
    /// Runs read the memory under the read lock and write it under the write lock, so that
    /// two runs never write it at once, nor one write it while another reads it.
    lock: RwLock<()>,
}

// SAFETY: the memory is the buffer's, not any thread's: a direct buffer's memory can be used
// from every thread of the JVM, and the `GlobalRef` is itself `Send + Sync`. Access from
// several threads goes through `lock`.
unsafe impl Send for DirectBuffer {}
// SAFETY: as for `Send`: `&DirectBuffer` gives the memory only under `lock`.
unsafe impl Sync for DirectBuffer {}

/// Reading a direct buffer's memory (held while a run reads it).
pub(crate) struct Reading<'b> {
    buffer: &'b DirectBuffer,
    _guard: RwLockReadGuard<'b, ()>,
}

/// Writing a direct buffer's memory (held while a run writes it).
pub(crate) struct Writing<'b> {
    buffer: &'b DirectBuffer,
    _guard: RwLockWriteGuard<'b, ()>,
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
            lock: RwLock::new(()),
        })
    }

    /// Whether the two buffers' memory overlaps.
    pub(crate) fn overlaps(&self, other: &DirectBuffer) -> bool {
        let (a, b) = (self.ptr as usize, other.ptr as usize);
        a < b + other.len && b < a + self.len
    }

    /// The memory, for reading; an error while a run writes it.
    pub(crate) fn read(&self) -> Result<Reading<'_>> {
        let guard = self.lock.try_read().map_err(|_| busy())?;
        Ok(Reading {
            buffer: self,
            _guard: guard,
        })
    }

    /// The memory, for writing; an error for a read-only buffer, or while another run
    /// reads or writes it.
    pub(crate) fn write(&self) -> Result<Writing<'_>> {
        if !self.writable {
            return Err(Failure::Argument(
                "the output tensor's buffer is read-only".into(),
            ));
        }
        let guard = self.lock.try_write().map_err(|_| busy())?;
        Ok(Writing {
            buffer: self,
            _guard: guard,
        })
    }
}

fn busy() -> Failure {
    Failure::Argument(
        "the tensor's buffer is being written by a run, or read while a run writes it".into(),
    )
}

impl Reading<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` and `len` are a direct buffer's address and capacity, valid while
        // the buffer object lives, which `_buffer` ensures for as long as `self` does (the
        // caller contract of a direct buffer: memory is not freed by other means, such as
        // closing the arena of a `MemorySegment`, while a tensor over it is open). The read
        // lock keeps every run's writes out while the slice lives; writes by Java code
        // during a run are the caller's error, as for any buffer shared between threads.
        unsafe { std::slice::from_raw_parts(self.buffer.ptr, self.buffer.len) }
    }
}

impl Writing<'_> {
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `Reading::bytes`; the write lock makes this the only slice of this
        // buffer that any run holds, and the run that writes checks that none of its inputs
        // overlaps it (`DirectBuffer::overlaps`). The buffer is writable (checked in
        // `write`).
        unsafe { std::slice::from_raw_parts_mut(self.buffer.ptr, self.buffer.len) }
    }
}
