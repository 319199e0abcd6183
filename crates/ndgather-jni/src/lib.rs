//! The native half of ndgather's Java front end (`org.ndgather`, in `java/`): JNI entry
//! points of the class `org.ndgather.Native`, each converting its arguments and calling the
//! core's dtype-erased op API (`ndgather::graph::Scope`'s ops, `Session::run_tensors`); the
//! generic builder (`generic.rs`, `Scope::op`) reaches any op of the registry by name. Nothing
//! here checks a shape or picks a default: the core does.
//!
//! Every entry point runs inside `guard`: an error becomes the Java exception TF Java 1.15
//! throws (`IllegalArgumentException` with TensorFlow's message), a closed, forged or
//! mistyped handle an `IllegalStateException`, and a Rust panic is caught before it reaches
//! the JVM and thrown as an `IllegalStateException`.
//!
//! Handles are entries of a table (the module `handles`), never pointers: each entry
//! point leases the objects it uses for as long as it uses them, so that a `close()` (or a
//! `Cleaner`) on another thread never frees memory under it.

mod direct;
mod generic;
mod graph_calls;
mod handles;
mod session_calls;
mod tensor;
mod tensor_calls;

use handles::Kind;
use jni::objects::{JClass, JLongArray, JObject, JString};
use jni::sys::{jint, jlong, jlongArray, jobjectArray};
use jni::JNIEnv;
use ndgather::graph::{AnyOutput, Scope};
use ndgather::DType;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tensor::JavaTensor;

impl Kind for JavaTensor {
    const NAME: &'static str = "Tensor";
}

impl Kind for Scope {
    const NAME: &'static str = "Scope";
}

impl Kind for AnyOutput {
    const NAME: &'static str = "Output";
}

/// Why an entry point failed, and so which exception Java sees.
enum Failure {
    /// The caller's arguments: `IllegalArgumentException`, TF Java's class for TensorFlow's
    /// `InvalidArgument`.
    Argument(String),
    /// A closed or null handle: `IllegalStateException`.
    State(String),
    /// A JNI call failed; where it left a Java exception pending, that one is thrown.
    Jni(jni::errors::Error),
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Failure {
        Failure::Jni(e)
    }
}

impl From<ndgather::graph::OpError> for Failure {
    fn from(e: ndgather::graph::OpError) -> Failure {
        Failure::Argument(e.to_string())
    }
}

impl From<ndgather::Error> for Failure {
    fn from(e: ndgather::Error) -> Failure {
        Failure::Argument(e.to_string())
    }
}

type Result<T> = std::result::Result<T, Failure>;

/// Runs `body`, turning its failure or panic into a pending Java exception (and `R`'s
/// default as the return value, which Java never sees).
fn guard<'l, R: Default>(
    env: &mut JNIEnv<'l>,
    body: impl FnOnce(&mut JNIEnv<'l>) -> Result<R>,
) -> R {
    let outcome = catch_unwind(AssertUnwindSafe(|| body(env)));
    let (class, message) = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(Failure::Argument(m))) => ("java/lang/IllegalArgumentException", m),
        Ok(Err(Failure::State(m))) => ("java/lang/IllegalStateException", m),
        Ok(Err(Failure::Jni(e))) => {
            if env.exception_check().unwrap_or(false) {
                return R::default();
            }
            ("java/lang/IllegalStateException", format!("JNI: {e}"))
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            (
                "java/lang/IllegalStateException",
                format!("ndgather's native library failed (a bug; please report it): {what}"),
            )
        }
    };
    if env.exception_check().unwrap_or(false) {
        _ = env.exception_clear();
    }
    _ = env.throw_new(class, message);
    R::default()
}

fn string(env: &mut JNIEnv<'_>, s: &JString<'_>) -> Result<String> {
    if s.is_null() {
        return Err(Failure::Argument("a name must not be null".into()));
    }
    Ok(env.get_string(s)?.into())
}

fn longs(env: &mut JNIEnv<'_>, a: &JLongArray<'_>) -> Result<Vec<i64>> {
    let n = env.get_array_length(a)? as usize;
    let mut out = vec![0i64; n];
    env.get_long_array_region(a, 0, &mut out)?;
    Ok(out)
}

fn long_array(env: &mut JNIEnv<'_>, values: &[i64]) -> Result<jlongArray> {
    let a = env.new_long_array(values.len() as i32)?;
    env.set_long_array_region(&a, 0, values)?;
    Ok(a.into_raw())
}

fn dims(shape: &[i64]) -> Result<Vec<usize>> {
    shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Failure::Argument(format!("a shape has a negative size: {shape:?}")))
}

/// A shape as Java's `long[]` (a dimension of memory that exists fits an `i64`).
fn java_dims(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

fn dtype_of(name: &str) -> Result<DType> {
    DType::from_name(name).ok_or_else(|| Failure::Argument(format!("unknown dtype {name}")))
}

/// The byte size of one element of a fixed-width dtype, 0 for the strings (Java sizes its
/// buffers by it).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_dtypeSize<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    dtype: JString<'l>,
) -> jint {
    guard(&mut env, |env| {
        let dtype = dtype_of(&string(env, &dtype)?)?;
        Ok(dtype.size().unwrap_or(0) as jint)
    })
}

/// The names of every dtype of the core's table, so that a Java test can check that
/// `DataType` has a row for each.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_dtypeNames<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
) -> jobjectArray {
    guard(&mut env, |env| {
        string_array(env, DType::ALL.iter().map(|d| d.name()))
    })
}

/// A Java `String[]` of `names`.
fn string_array<'a>(
    env: &mut JNIEnv<'_>,
    names: impl ExactSizeIterator<Item = &'a str>,
) -> Result<jobjectArray> {
    let out = env.new_object_array(names.len() as i32, "java/lang/String", JObject::null())?;
    for (k, name) in names.enumerate() {
        let name = env.new_string(name)?;
        env.set_object_array_element(&out, k as i32, &name)?;
        // JNI guarantees 16 local references; one per name would exceed it.
        env.delete_local_ref(name)?;
    }
    Ok(out.into_raw())
}

/// How many native objects Java holds handles to now (open and not yet closed): tests count
/// them to find leaks.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_registryLive<'l>(
    _env: JNIEnv<'l>,
    _: JClass<'l>,
) -> jlong {
    handles::live() as jlong
}

/// Returns its argument: the cost of a JNI call that does nothing, for the benchmarks'
/// baseline.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_noop<'l>(
    _env: JNIEnv<'l>,
    _: JClass<'l>,
    x: jlong,
) -> jlong {
    x
}
