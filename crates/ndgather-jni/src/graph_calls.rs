//! JNI entry points of scopes, constants, placeholders and gradients: the graph's own nodes.
//! Every op of the registry is built by `generic.rs`.

use crate::handles::{lease, register, release, Fresh};
use crate::tensor::JavaTensor;
use crate::{dtype_of, guard, long_array, longs, string, Result};
use jni::objects::{JClass, JLongArray, JString};
use jni::sys::{jboolean, jlong, jlongArray};
use jni::JNIEnv;
use ndgather::graph::{AnyOutput, Scope};
use ndgather::shape::Shape;

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
