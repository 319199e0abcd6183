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
//! Handles are entries of a registry (the module `registry`), never pointers: each entry
//! point leases the objects it uses for as long as it uses them, so that a `close()` (or a
//! `Cleaner`) on another thread never frees memory under it.

mod direct;
mod generic;
mod registry;
mod tensor;

use direct::DirectBuffer;
use jni::objects::{JByteArray, JByteBuffer, JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jlongArray, jobjectArray, jstring};
use jni::JNIEnv;
use ndgather::embedding::PartitionStrategy;
use ndgather::embedding_bag::{BagMode, EmbeddingBag};
use ndgather::graph::{
    AnyOutput, EmbeddingOpOptions, Feeds, GatherNdOpOptions, GatherOpOptions, Scope, Session,
};
use ndgather::shape::Shape;
use ndgather::tensor_scatter::{ScatterKind, TensorScatter};
use ndgather::{BadIndices, DType, Strings, TakeAlongAxisOptions, Tensor};
use registry::{lease, register, release, Fresh, Kind};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
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

/// A tensor of `dtype` (a fixed-width one) and `shape` over the bytes of a direct buffer,
/// in the machine's byte order: read (and, where `writable`, written) where they lie, or
/// copied where they cannot be (`bool`, whose bytes are checked; memory not aligned to the
/// dtype).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorWrap<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    dtype: JString<'l>,
    shape: JLongArray<'l>,
    data: JByteBuffer<'l>,
    writable: jboolean,
) -> jlong {
    guard(&mut env, |env| {
        let dtype = dtype_of(&string(env, &dtype)?)?;
        let shape = dims(&longs(env, &shape)?)?;
        let buffer = DirectBuffer::new(env, &data, writable != 0)?;
        register(JavaTensor::wrap(buffer, dtype, shape)?)
    })
}

/// Whether the tensor reads a direct buffer in place (`false`: it holds a copy).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorIsDirect<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    tensor: jlong,
) -> jboolean {
    guard(&mut env, |_| {
        Ok(jboolean::from(
            lease::<JavaTensor>(tensor)?.direct().is_some(),
        ))
    })
}

/// A tensor of `dtype` (a fixed-width one) and `shape` from the bytes of a Java array, in
/// the machine's byte order, copied.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorFromArray<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    dtype: JString<'l>,
    shape: JLongArray<'l>,
    data: JByteArray<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let dtype = dtype_of(&string(env, &dtype)?)?;
        let shape = dims(&longs(env, &shape)?)?;
        let bytes = env.convert_byte_array(&data)?;
        register(JavaTensor::Owned(Tensor::from_bytes(
            dtype, &shape, &bytes,
        )?))
    })
}

/// A tensor of byte strings (TF's `string`) of `shape`, from `byte[]`s in row-major order.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorFromStrings<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    shape: JLongArray<'l>,
    values: JObjectArray<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let shape = dims(&longs(env, &shape)?)?;
        let n = env.get_array_length(&values)?;
        let mut items = Vec::with_capacity(n as usize);
        for k in 0..n {
            let item = JByteArray::from(env.get_object_array_element(&values, k)?);
            if item.is_null() {
                return Err(Failure::Argument(format!("string {k} is null")));
            }
            items.push(env.convert_byte_array(&item)?);
        }
        register(JavaTensor::Owned(Tensor::from_shape_vec(&shape, items)?))
    })
}

/// Frees a tensor (Java calls it once, from `close()` or its `Cleaner`).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorFree<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    tensor: jlong,
) {
    guard(&mut env, |_| release::<JavaTensor>(tensor))
}

/// The tensor's dtype, by name.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorDtype<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    tensor: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let name = lease::<JavaTensor>(tensor)?.dtype().name();
        Ok(env.new_string(name)?.into_raw())
    })
}

/// The tensor's shape.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorShape<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    tensor: jlong,
) -> jlongArray {
    guard(&mut env, |env| {
        let shape = java_dims(lease::<JavaTensor>(tensor)?.shape());
        long_array(env, &shape)
    })
}

/// A fixed-width tensor's elements as bytes, row-major in the machine's byte order.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorBytes<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    tensor: jlong,
) -> jbyteArray {
    guard(&mut env, |env| {
        let bytes = lease::<JavaTensor>(tensor)?.lend()?.view()?.to_bytes()?;
        Ok(env.byte_array_from_slice(&bytes)?.into_raw())
    })
}

/// A byte-string tensor's elements as `byte[]`s, row-major.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_tensorStrings<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    tensor: jlong,
) -> jobjectArray {
    guard(&mut env, |env| {
        let t = lease::<JavaTensor>(tensor)?;
        let JavaTensor::Owned(Tensor::Bytes(strings)) = &*t else {
            return Err(Failure::Argument(format!(
                "a tensor of {} holds no strings",
                t.dtype()
            )));
        };
        let out = env.new_object_array(strings.len() as i32, "[B", JObject::null())?;
        for (k, s) in Strings::iter(strings).enumerate() {
            let item = env.byte_array_from_slice(s)?;
            env.set_object_array_element(&out, k as i32, &item)?;
        }
        Ok(out.into_raw())
    })
}

/// A new scope: an eager one (each op runs when created) or a graph's root.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_scopeNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    eager: jboolean,
) -> jlong {
    guard(&mut env, |_| {
        register(if eager != 0 {
            Scope::eager()
        } else {
            Scope::graph()
        })
    })
}

/// `scope.withName(name)` (`sub == false`) or `scope.withSubScope(name)` (`sub == true`).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_scopeDerive<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    name: JString<'l>,
    sub: jboolean,
) -> jlong {
    guard(&mut env, |env| {
        let name = string(env, &name)?;
        let scope = lease::<Scope>(scope)?;
        register(if sub != 0 {
            scope.with_sub_scope(&name)
        } else {
            scope.with_name(&name)
        })
    })
}

/// Frees a scope.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_scopeFree<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
) {
    guard(&mut env, |_| release::<Scope>(scope))
}

/// A constant holding a copy of the tensor.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opConstant<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    tensor: jlong,
) -> jlong {
    guard(&mut env, |_| {
        let value = lease::<JavaTensor>(tensor)?.to_tensor()?;
        register(lease::<Scope>(scope)?.constant(value))
    })
}

/// A placeholder of `dtype`; `shape` null for an unknown shape, -1 for an unknown size.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opPlaceholder<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    dtype: JString<'l>,
    shape: JLongArray<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let dtype = dtype_of(&string(env, &dtype)?)?;
        let shape = if shape.is_null() {
            Shape::unknown()
        } else {
            let dims = longs(env, &shape)?;
            Shape::from_dims(dims.iter().map(|&d| usize::try_from(d).ok()).collect())
        };
        register(lease::<Scope>(scope)?.placeholder(dtype, shape)?)
    })
}

fn strategy(env: &mut JNIEnv<'_>, name: &JString<'_>) -> Result<PartitionStrategy> {
    let name = string(env, name)?;
    PartitionStrategy::from_name(&name).ok_or_else(|| {
        Failure::Argument(format!(
            "partitionStrategy must be \"mod\" or \"div\", got \"{name}\""
        ))
    })
}

fn policy(env: &mut JNIEnv<'_>, name: &JString<'_>) -> Result<BadIndices> {
    let name = string(env, name)?;
    BadIndices::from_name(&name).ok_or_else(|| {
        Failure::Argument(format!(
            "badIndicesPolicy must be one of {}, got \"{name}\"",
            BadIndices::ALL
                .iter()
                .map(|p| p.name().to_uppercase())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// `GatherV2`: TF Java's `Gather.create(scope, params, indices, axis, options)`.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opGather<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    params: jlong,
    indices: jlong,
    axis: jlong,
    batch_dims: jlong,
    bad_indices: JString<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let options = GatherOpOptions::new()
            .batch_dims(batch_dims)
            .bad_indices(policy(env, &bad_indices)?);
        let (p, i, a) = (
            lease::<AnyOutput>(params)?,
            lease::<AnyOutput>(indices)?,
            lease::<AnyOutput>(axis)?,
        );
        register(lease::<Scope>(scope)?.gather(&p, &i, &a, options)?)
    })
}

/// `GatherNd`: TF Java's `GatherNd.create(scope, params, indices, options)`.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opGatherNd<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    params: jlong,
    indices: jlong,
    batch_dims: jlong,
    bad_indices: JString<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let options = GatherNdOpOptions::new()
            .batch_dims(batch_dims)
            .bad_indices(policy(env, &bad_indices)?);
        let (p, i) = (lease::<AnyOutput>(params)?, lease::<AnyOutput>(indices)?);
        register(lease::<Scope>(scope)?.gather_nd(&p, &i, options)?)
    })
}

/// `TakeAlongAxis` (NumPy's `take_along_axis`), beyond TF Java.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opTakeAlongAxis<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    arr: jlong,
    indices: jlong,
    axis: jlong,
    bad_indices: JString<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let options = TakeAlongAxisOptions::new(axis).bad_indices(policy(env, &bad_indices)?);
        let (a, i) = (lease::<AnyOutput>(arr)?, lease::<AnyOutput>(indices)?);
        register(lease::<Scope>(scope)?.take_along_axis(&a, &i, options)?)
    })
}

/// TensorFlow's `TensorScatterUpdate`, `Add`, `Sub`, `Min` or `Max` (`kind`: "update",
/// "add", "sub", "min" or "max").
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opTensorScatter<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    kind: JString<'l>,
    tensor: jlong,
    indices: jlong,
    updates: jlong,
    bad_indices: JString<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let name = string(env, &kind)?;
        let kind = ScatterKind::from_name(&name)
            .ok_or_else(|| Failure::Argument(format!("no tensor_scatter_nd_{name}")))?;
        let op = TensorScatter::new(kind).bad_indices(policy(env, &bad_indices)?);
        let [t, i, u] = [tensor, indices, updates].map(lease::<AnyOutput>);
        register(lease::<Scope>(scope)?.tensor_scatter(&*t?, &*i?, &*u?, op)?)
    })
}

/// `EmbeddingLookup` (TensorFlow's `tf.nn.embedding_lookup`): `ids` into the table split as
/// `shards`, by `partition_strategy` ("mod" or "div"), rows clipped to `max_norm` (NaN: no
/// clipping).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opEmbeddingLookup<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    shards: JLongArray<'l>,
    ids: jlong,
    partition_strategy: JString<'l>,
    max_norm: f64,
) -> jlong {
    guard(&mut env, |env| {
        let options = EmbeddingOpOptions::new()
            .partition_strategy(strategy(env, &partition_strategy)?)
            .max_norm(Some(max_norm).filter(|m| !m.is_nan()));
        let shards = longs(env, &shards)?
            .iter()
            .map(|&h| lease::<AnyOutput>(h).map(|o| AnyOutput::clone(&o)))
            .collect::<Result<Vec<_>>>()?;
        let ids = lease::<AnyOutput>(ids)?;
        register(lease::<Scope>(scope)?.embedding_lookup(&shards, &ids, options)?)
    })
}

/// PyTorch's `embedding_bag` (beyond TF Java): `input` (2-D, or 1-D with `offsets`, 0 for
/// none) into `shards`, reduced by `mode`; `weights` 0 for none, `padding_idx` `i64::MIN` for
/// none, `max_norm` NaN for none.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ndgather_Native_opEmbeddingBag<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    shards: JLongArray<'l>,
    input: jlong,
    offsets: jlong,
    weights: jlong,
    mode: JString<'l>,
    padding_idx: jlong,
    include_last_offset: jboolean,
    max_norm: f64,
    partition_strategy: JString<'l>,
    bad_indices: JString<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let mode_name = string(env, &mode)?;
        let mode = BagMode::from_name(&mode_name).ok_or_else(|| {
            Failure::Argument(format!(
                "mode must be \"sum\", \"mean\" or \"max\", got \"{mode_name}\""
            ))
        })?;
        let bag = EmbeddingBag::new(mode)
            .partition_strategy(strategy(env, &partition_strategy)?)
            .max_norm(Some(max_norm).filter(|m| !m.is_nan()))
            .padding_idx(Some(padding_idx).filter(|&p| p != i64::MIN))
            .include_last_offset(include_last_offset != 0)
            .bad_indices(policy(env, &bad_indices)?);
        let shards = longs(env, &shards)?
            .iter()
            .map(|&h| lease::<AnyOutput>(h).map(|o| AnyOutput::clone(&o)))
            .collect::<Result<Vec<_>>>()?;
        let optional = |h: jlong| (h != 0).then(|| lease::<AnyOutput>(h)).transpose();
        let (offsets, weights) = (optional(offsets)?, optional(weights)?);
        let input = lease::<AnyOutput>(input)?;
        register(lease::<Scope>(scope)?.embedding_bag(
            &shards,
            &input,
            offsets.as_deref(),
            weights.as_deref(),
            bag,
        )?)
    })
}

/// `tf.gradients(ys, xs, dx)` (TF Java's `Gradients`): one new output handle per x; `dx`
/// null for ones.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opGradients<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    ys: JLongArray<'l>,
    xs: JLongArray<'l>,
    dx: JLongArray<'l>,
) -> jlongArray {
    guard(&mut env, |env| {
        let mut outputs = |a: &JLongArray<'_>| -> Result<Vec<AnyOutput>> {
            longs(env, a)?
                .iter()
                .map(|&h| lease::<AnyOutput>(h).map(|o| AnyOutput::clone(&o)))
                .collect()
        };
        let (ys, xs) = (outputs(&ys)?, outputs(&xs)?);
        let dx = if dx.is_null() {
            None
        } else {
            Some(outputs(&dx)?)
        };
        let grads = lease::<Scope>(scope)?.gradients(&ys, &xs, dx.as_deref())?;
        let mut fresh = Fresh::default();
        let handles = grads
            .into_iter()
            .map(|g| fresh.register(g))
            .collect::<Result<Vec<i64>>>()?;
        let handles = long_array(env, &handles)?;
        fresh.hand_over();
        Ok(handles)
    })
}

/// Frees an output handle.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_outputFree<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    output: jlong,
) {
    guard(&mut env, |_| release::<AnyOutput>(output))
}

/// The output's op name.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_outputName<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    output: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let name = lease::<AnyOutput>(output)?.op_name();
        Ok(env.new_string(name)?.into_raw())
    })
}

/// The output's op type (TensorFlow's name for it: `GatherV2`, `Const`, ...).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_outputType<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    output: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let name = lease::<AnyOutput>(output)?.op_type();
        Ok(env.new_string(name)?.into_raw())
    })
}

/// The output's dtype, by name.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_outputDtype<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    output: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let name = lease::<AnyOutput>(output)?.dtype().name();
        Ok(env.new_string(name)?.into_raw())
    })
}

/// The output's static shape: null for an unknown rank, -1 for an unknown size.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_outputShape<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    output: jlong,
) -> jlongArray {
    guard(&mut env, |env| {
        let shape = lease::<AnyOutput>(output)?.shape();
        match shape.dims() {
            None => Ok(std::ptr::null_mut()),
            Some(dims) => {
                let dims: Vec<i64> = dims.iter().map(|d| d.map_or(-1, |n| n as i64)).collect();
                long_array(env, &dims)
            }
        }
    })
}

/// The output's value as a new tensor (an eager op's, or a graph constant's), or 0.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_outputValue<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    output: jlong,
) -> jlong {
    guard(&mut env, |_| {
        lease::<AnyOutput>(output)?
            .value()
            .map_or(Ok(0), |t| register(JavaTensor::Owned(t)))
    })
}

/// Runs the graph of `scope`: feeds (outputs and tensors, pairwise), then the fetches'
/// values as new tensors, each as its handle, dtype number (its place in `DType::ALL`),
/// rank and dimensions.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_sessionRun<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    feed_outputs: JLongArray<'l>,
    feed_tensors: JLongArray<'l>,
    fetches: JLongArray<'l>,
) -> jlongArray {
    guard(&mut env, |env| {
        let session = Session::new(&*lease::<Scope>(scope)?);
        let feeds = FeedList::read(env, &feed_outputs, &feed_tensors)?;
        let lent = feeds.lend()?;
        let fetches = longs(env, &fetches)?
            .iter()
            .map(|&f| lease::<AnyOutput>(f).map(|o| AnyOutput::clone(&o)))
            .collect::<Result<Vec<_>>>()?;
        let feeds = FeedList::feeds(&feeds.outputs, &lent)?;
        let results = session.run_tensors(&fetches, &feeds)?;
        // Each result with its dtype and shape, so that Java makes its tensors without
        // asking for them: handle, dtype number, rank, dimensions.
        let mut packed = Vec::new();
        let mut fresh = Fresh::default();
        for t in results {
            let dtype = DType::ALL.iter().position(|&d| d == t.dtype());
            let shape = java_dims(t.shape());
            let dtype = dtype.map_or(-1, |d| d as i64);
            let rank = shape.len() as i64;
            packed.extend([fresh.register(JavaTensor::Owned(t))?, dtype, rank]);
            packed.extend(shape);
        }
        let packed = long_array(env, &packed)?;
        fresh.hand_over();
        Ok(packed)
    })
}

/// Runs the graph of `scope` for one fetch, written into `into`, a tensor over a writable
/// direct buffer of the fetch's dtype and shape (unchanged on error).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_sessionRunInto<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    feed_outputs: JLongArray<'l>,
    feed_tensors: JLongArray<'l>,
    fetch: jlong,
    into: jlong,
) {
    guard(&mut env, |env| {
        let session = Session::new(&*lease::<Scope>(scope)?);
        let feeds = FeedList::read(env, &feed_outputs, &feed_tensors)?;
        let into = lease::<JavaTensor>(into)?;
        if let Some(out) = into.direct() {
            let fed = feeds.tensors.iter().filter_map(|t| t.direct());
            if fed.into_iter().any(|b| b.overlaps(out)) {
                return Err(Failure::Argument(
                    "the output tensor's buffer overlaps a fed tensor's: a run cannot write \
                     what it reads"
                        .into(),
                ));
            }
        }
        let lent = feeds.lend()?;
        let feeds = FeedList::feeds(&feeds.outputs, &lent)?;
        let fetch = lease::<AnyOutput>(fetch)?;
        into.write(|out| Ok(session.run_into(&fetch, &feeds, out)?))
    })
}

/// A run's feeds as Java passes them: outputs and tensors, pairwise, each leased for the run.
struct FeedList {
    outputs: Vec<Arc<AnyOutput>>,
    tensors: Vec<Arc<JavaTensor>>,
}

impl FeedList {
    fn read(
        env: &mut JNIEnv<'_>,
        outputs: &JLongArray<'_>,
        tensors: &JLongArray<'_>,
    ) -> Result<FeedList> {
        let (outs, values) = (longs(env, outputs)?, longs(env, tensors)?);
        Ok(FeedList {
            outputs: outs
                .iter()
                .map(|&o| lease::<AnyOutput>(o))
                .collect::<Result<_>>()?,
            tensors: values
                .iter()
                .map(|&t| lease::<JavaTensor>(t))
                .collect::<Result<_>>()?,
        })
    }

    /// The fed tensors' elements, lent for the run (the leases keep the tensors alive across
    /// it, whoever closes them meanwhile).
    fn lend(&self) -> Result<Vec<tensor::Lent<'_>>> {
        self.tensors.iter().map(|t| t.lend()).collect()
    }

    /// The core's feeds: each value read where it lies.
    fn feeds<'v>(outputs: &[Arc<AnyOutput>], lent: &'v [tensor::Lent<'_>]) -> Result<Feeds<'v>> {
        let mut feeds = Feeds::new();
        for (o, l) in outputs.iter().zip(lent) {
            feeds = feeds.feed_view(o, l.view()?)?;
        }
        Ok(feeds)
    }
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
        let out =
            env.new_object_array(DType::ALL.len() as i32, "java/lang/String", JObject::null())?;
        for (k, d) in DType::ALL.iter().enumerate() {
            let name = env.new_string(d.name())?;
            env.set_object_array_element(&out, k as i32, &name)?;
        }
        Ok(out.into_raw())
    })
}

/// How many native objects Java holds handles to now (open and not yet closed): tests count
/// them to find leaks.
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_registryLive<'l>(
    _env: JNIEnv<'l>,
    _: JClass<'l>,
) -> jlong {
    registry::live() as jlong
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
