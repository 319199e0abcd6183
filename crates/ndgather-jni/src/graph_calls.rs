//! JNI entry points of scopes and of the typed op builders that came before the generic one
//! (`generic.rs`): each converts its arguments and calls the core's graph op.

use crate::handles::{lease, register, release, Fresh};
use crate::tensor::JavaTensor;
use crate::{dtype_of, guard, long_array, longs, string, Failure, Result};
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jboolean, jlong, jlongArray};
use jni::JNIEnv;
use ndgather::embedding::PartitionStrategy;
use ndgather::embedding_bag::{BagMode, EmbeddingBag};
use ndgather::graph::{AnyOutput, EmbeddingOpOptions, GatherNdOpOptions, GatherOpOptions, Scope};
use ndgather::shape::Shape;
use ndgather::tensor_scatter::{ScatterKind, TensorScatter};
use ndgather::{BadIndices, TakeAlongAxisOptions};

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
