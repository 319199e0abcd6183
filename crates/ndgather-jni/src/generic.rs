//! The generic builder: any registered op by name (TF Java's `GraphOperationBuilder`),
//! which the Java op classes of newer families are thin typed facades over. Inputs come as
//! one `long[]` of output handles per signature input, attributes as name and text pairs,
//! each read as its kind by the core ([`AttrDef::parse`](ndgather::registry::AttrDef)).

use super::{guard, longs, string, string_array, Failure, Result};
use crate::handles::{lease, register};
use jni::objects::{JClass, JLongArray, JObjectArray, JString};
use jni::sys::{jlong, jobjectArray};
use jni::JNIEnv;
use ndgather::graph::{AnyOutput, NodeInput, Scope};
use ndgather::registry::{self, Attr, Attrs, InputKind};

/// The strings of a `String[]` (none may be null).
fn strings(env: &mut JNIEnv<'_>, array: &JObjectArray<'_>, what: &str) -> Result<Vec<String>> {
    let n = env.get_array_length(array)?;
    (0..n)
        .map(|k| {
            let s = JString::from(env.get_object_array_element(array, k)?);
            if s.is_null() {
                return Err(Failure::Argument(format!("{what} {k} is null")));
            }
            let text = string(env, &s);
            // A local reference per element would pile up for the call's length.
            env.delete_local_ref(s)?;
            text
        })
        .collect()
}

/// The registered op `op` on `inputs` (for each input of its signature, the handles of its
/// tensors: one, none for an optional input left out, any number for a list), with the
/// attributes `attr_names[k]` = `attr_values[k]`, and the attributes `fed_names[k]` given by
/// the tensor of handle `fed[k]` (TF's input tensors: `GatherV2`'s axis, `num_segments`).
/// Returns the new output's handle.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ndgather_Native_opBuild<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    scope: jlong,
    op: JString<'l>,
    inputs: JObjectArray<'l>,
    attr_names: JObjectArray<'l>,
    attr_values: JObjectArray<'l>,
    fed_names: JObjectArray<'l>,
    fed: JLongArray<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let name = string(env, &op)?;
        let sig = registry::find(&name)?.signature();
        let n = env.get_array_length(&inputs)?;
        if n as usize > sig.inputs.len() || (n as usize) < sig.least_inputs() {
            // Before anything is sized by a caller's length.
            return Err(Failure::Argument(format!(
                "{name}: takes {} inputs, got {n}",
                sig.input_count()
            )));
        }
        let mut given = Vec::with_capacity(sig.inputs.len());
        for k in 0..n {
            let handles = JLongArray::from(env.get_object_array_element(&inputs, k)?);
            let handles = match handles.is_null() {
                true => vec![],
                false => longs(env, &handles)?,
            };
            let outputs = handles
                .iter()
                .map(|&h| lease::<AnyOutput>(h).map(|o| AnyOutput::clone(&o)))
                .collect::<Result<Vec<_>>>()?;
            let list = sig.inputs.get(k as usize).map(|d| d.kind) == Some(InputKind::List);
            // An optional list given no handles is left out.
            let list = list
                || (sig.inputs.get(k as usize).map(|d| d.kind) == Some(InputKind::OptionalList)
                    && !handles.is_empty());
            given.push(match (list, <[AnyOutput; 1]>::try_from(outputs)) {
                (true, Ok([one])) => NodeInput::List(vec![one]),
                (true, Err(all)) => NodeInput::List(all),
                (false, Ok([one])) => NodeInput::One(one),
                (false, Err(none)) if none.is_empty() => NodeInput::Absent,
                (false, Err(many)) => {
                    return Err(Failure::Argument(format!(
                        "{name}: input {k} takes one tensor, got {}",
                        many.len()
                    )))
                }
            });
        }
        let names = strings(env, &attr_names, "attribute name")?;
        let values = strings(env, &attr_values, "attribute value")?;
        if names.len() != values.len() {
            return Err(Failure::Argument(format!(
                "{name}: {} attribute names but {} values",
                names.len(),
                values.len()
            )));
        }
        let mut attrs = Attrs::new();
        for (attr, text) in names.iter().zip(&values) {
            match sig.attrs.iter().find(|a| a.name == attr) {
                Some(def) => attrs.insert(
                    def.name,
                    def.parse(text).map_err(|what| {
                        Failure::Argument(format!(
                            "{name}: attribute \"{attr}\" takes {what}, got '{text}'"
                        ))
                    })?,
                ),
                // The op's own check names an attribute it does not take.
                None => attrs.insert(attr.clone(), Attr::Str(text.clone().into())),
            }
        }
        let fed_names = strings(env, &fed_names, "fed attribute name")?;
        let fed = longs(env, &fed)?;
        if fed_names.len() != fed.len() {
            return Err(Failure::Argument(format!(
                "{name}: {} fed attribute names but {} tensors",
                fed_names.len(),
                fed.len()
            )));
        }
        let fed = fed
            .iter()
            .map(|&h| lease::<AnyOutput>(h).map(|o| AnyOutput::clone(&o)))
            .collect::<Result<Vec<_>>>()?;
        let fed: Vec<(&str, &AnyOutput)> = fed_names.iter().map(String::as_str).zip(&fed).collect();
        register(lease::<Scope>(scope)?.op_fed(&name, &given, &attrs, &fed)?)
    })
}

/// The names of every registered op, in the registry's order: what the generic builder
/// reaches (the Java coverage test walks them).
#[no_mangle]
pub extern "system" fn Java_org_ndgather_Native_opNames<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
) -> jobjectArray {
    guard(&mut env, |env| {
        let names: Vec<&str> = registry::names().collect();
        string_array(env, names.into_iter())
    })
}
