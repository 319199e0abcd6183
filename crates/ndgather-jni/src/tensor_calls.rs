//! JNI entry points of `org.ndgather.Tensor`: tensors made from Java arrays, strings and
//! direct buffers, and read back.

use crate::direct::DirectBuffer;
use crate::handles::{lease, register, release};
use crate::tensor::JavaTensor;
use crate::{dims, dtype_of, guard, java_dims, long_array, longs, string, Failure};
use jni::objects::{JByteArray, JByteBuffer, JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jbyteArray, jlong, jlongArray, jobjectArray, jstring};
use jni::JNIEnv;
use ndgather::{Strings, Tensor};

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
