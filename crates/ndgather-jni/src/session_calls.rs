//! JNI entry points of outputs and sessions: an output's name, type, dtype, shape and value,
//! the gradients, and a session's runs with their feeds.

use crate::handles::{lease, register, release, Fresh};
use crate::tensor::JavaTensor;
use crate::{guard, java_dims, long_array, longs, Failure, Result};
use jni::objects::{JClass, JLongArray};
use jni::sys::{jlong, jlongArray, jstring};
use jni::JNIEnv;
use ndgather::graph::{AnyOutput, Feeds, Scope, Session};
use ndgather::DType;
use std::sync::Arc;

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
    fn lend(&self) -> Result<Vec<crate::tensor::Lent<'_>>> {
        self.tensors.iter().map(|t| t.lend()).collect()
    }

    /// The core's feeds: each value read where it lies.
    fn feeds<'v>(
        outputs: &[Arc<AnyOutput>],
        lent: &'v [crate::tensor::Lent<'_>],
    ) -> Result<Feeds<'v>> {
        let mut feeds = Feeds::new();
        for (o, l) in outputs.iter().zip(lent) {
            feeds = feeds.feed_view(o, l.view()?)?;
        }
        Ok(feeds)
    }
}
