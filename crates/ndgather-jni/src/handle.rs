//! Native objects behind Java's `long` handles, and the memory of direct NIO buffers: the
//! crate's `unsafe` code, each block beside its proof.
//!
//! A handle is a `Box<T>` given up to Java ([`into_handle`]); Java keeps it in one field,
//! passes it back only while it is open, and frees it exactly once ([`free`], from `close()`
//! or its `Cleaner`, guarded by an atomic swap to 0). A handle of 0 is a closed object and
//! gives an `IllegalStateException`, never a dereference.

use super::{Failure, Result};
use jni::objects::JByteBuffer;
use jni::JNIEnv;

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

/// The bytes of a direct buffer, for reading.
pub(crate) fn direct_bytes<'b>(
    env: &mut JNIEnv<'_>,
    buffer: &'b JByteBuffer<'_>,
) -> Result<&'b [u8]> {
    let (ptr, len) = address(env, buffer)?;
    // SAFETY: a direct buffer's address and capacity describe memory that stays valid while
    // the buffer object is alive, which the Java caller keeps referenced across the call;
    // the slice lives no longer than the borrow of the buffer. Java does not write the
    // buffer during the call (it is the caller's thread that is in the call).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
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
