//! The fuzz targets' bodies, one function per target. Each `fuzz_targets/NAME.rs` is a
//! one-line wrapper around its function here, and the CLI crate's test
//! `tests/fuzz_replay.rs` compiles this file too and replays every seed, corpus and
//! regression input through the same functions: a body that stops compiling, or an input
//! that panics, fails the ordinary `cargo test`.
//!
//! Each function takes any bytes and must neither panic nor abort: bad input is an error.
//! Where a second path can say what the answer is (the reference gather, the general path
//! for the path for small calls), they must agree.

use ndgather::registry::{Input, Value};
use ndgather::{
    memory::RawView, shape::checked_numel, Error, FillValue, GatherNdOptions, GatherOptions, Op,
    OpDef, Out, RaggedView, RowSplits, TakeAlongAxisOptions, Tensor,
};
use ndgather_cli::error::CliError;
use ndgather_cli::inplace::Buffer;
use ndgather_cli::source::Loaded;

#[allow(dead_code)]
#[path = "../../crates/ndgather/tests/common/general_path.rs"]
mod general_path;
#[path = "input.rs"]
pub mod input;
#[allow(dead_code)]
#[path = "../../crates/ndgather/tests/common/reference.rs"]
mod reference;

use input::{small_array, Bytes};

/// A target's body: any bytes in, a panic for a bug.
pub type Body = fn(&[u8]);

/// Every target: its name (its `fuzz_targets/NAME.rs` and `fuzz/*/NAME/` folders) and body.
pub const TARGETS: &[(&str, Body)] = &[
    ("gather", gather),
    ("gather_nd", gather_nd),
    ("npy", npy),
    ("npz", npz),
    ("safetensors", safetensors),
    ("literal", literal),
    ("small_call", small_call),
    ("ragged", ragged),
];

/// gather on fuzzed shapes, options and indices: never a panic, and where the reference can
/// say, the same result.
pub fn gather(data: &[u8]) {
    let mut b = Bytes(data);
    let pshape = b.shape(4);
    let ishape = b.shape(3);
    let (axis, bd, policy, default_axis) = (
        b.small_int(),
        b.small_int(),
        b.policy(),
        b.byte().is_multiple_of(4),
    );
    let shape_rule = |axis| {
        ndgather::shape::gather_shape(
            &pshape.as_slice().into(),
            &ishape.as_slice().into(),
            axis,
            bd,
            None,
        )
    };
    let Some(params) = small_array(&pshape, |k| k as i32) else {
        // Shapes too large to build: the shape rule must still answer without panicking.
        let _ = shape_rule(ndgather::shape::Axis::Given(axis));
        return;
    };
    let Some(indices) = small_array(&ishape, |_| b.index()) else {
        return;
    };
    let mut o = GatherOptions::new().batch_dims(bd).bad_indices(policy);
    if !default_axis {
        o = o.axis(axis);
    }
    let ours = o.gather(&params, &indices);
    let narrow = indices.mapv(|v| v as i16);
    let _ = o.gather(&params, &narrow);
    // Compare with the reference where the call is valid.
    let axis = o
        .axis
        .map_or(ndgather::shape::Axis::Default, ndgather::shape::Axis::Given);
    let Ok(rule) = shape_rule(axis) else {
        assert!(ours.is_err());
        return;
    };
    let (Some(a), Some(bd)) = (rule.axis, rule.batch_dims) else {
        panic!("rule unresolved")
    };
    // The reference walks every output position: only for outputs of a sane size.
    if rule.output.num_elements().is_none_or(|n| n > 1 << 16) {
        return;
    }
    match (ours, reference::gather(&params, &indices, a, bd, policy)) {
        (Ok(x), Ok(y)) => assert_eq!(x, y),
        (
            Err(Error::BadIndex {
                position, value, ..
            }),
            Err(reference::RefError::BadIndex(p, v)),
        ) => assert_eq!((position, value), (p, v as i128)),
        (x, y) => panic!("ours {x:?}, reference {y:?}"),
    }
}

/// gather_nd on fuzzed shapes, options and indices: never a panic, and where the reference
/// can say, the same result.
pub fn gather_nd(data: &[u8]) {
    let mut b = Bytes(data);
    let pshape = b.shape(4);
    let ishape = b.shape(3);
    let (bd, policy) = (b.small_int(), b.policy());
    let rule = || {
        ndgather::shape::gather_nd_shape(
            &pshape.as_slice().into(),
            &ishape.as_slice().into(),
            bd,
            None,
        )
    };
    let Some(params) = small_array(&pshape, |k| k as u8) else {
        let _ = rule();
        return;
    };
    let Some(indices) = small_array(&ishape, |_| b.index()) else {
        return;
    };
    let o = GatherNdOptions::new().batch_dims(bd).bad_indices(policy);
    let ours = o.gather_nd(&params, &indices);
    let _ = o.gather_nd(&params, &indices.mapv(|v| v as u16));
    let rule = rule();
    // The reference walks every output position: only for outputs of a sane size.
    if rule
        .as_ref()
        .is_ok_and(|r| r.output.num_elements().is_none_or(|n| n > 1 << 16))
    {
        return;
    }
    match (rule, ours) {
        (Err(e), ours) => assert_eq!(ours.unwrap_err(), e),
        (
            Ok(_),
            Err(Error::BadIndexVector {
                position, values, ..
            }),
        ) => match reference::gather_nd(&params, &indices, bd as usize, policy) {
            Err(reference::RefError::BadIndexVector(p, v)) => {
                assert_eq!(position, p);
                assert!(values.iter().copied().eq(v.iter().map(|&x| x as i128)));
            }
            other => panic!("reference {other:?}"),
        },
        (Ok(_), Err(e)) => panic!("error after the shape rule passed: {e}"),
        (Ok(_), Ok(x)) => assert_eq!(
            x,
            reference::gather_nd(&params, &indices, bd as usize, policy).unwrap()
        ),
    }
}

/// The `.npy` reader on any bytes: an error or an array, never a panic, an abort or an
/// allocation the bytes cannot back; and the whole array read from where it lies.
pub fn npy(data: &[u8]) {
    let buffer = Buffer::Heap(data.to_vec());
    if let Ok(loaded) = ndgather_cli::npy::parse("fuzz", buffer, 0, data.len()) {
        let _ = loaded.into_tensor();
    }
}

/// A `.npz` archive's members on any bytes: a zip that claims sizes it does not hold, a
/// member that inflates past its header (a zip bomb), members at odd offsets.
pub fn npz(data: &[u8]) {
    let names = ndgather_cli::archive::npz_names_in("fuzz", data).unwrap_or_default();
    each_member(data, names, ndgather_cli::archive::npz_member);
}

/// A safetensors file's tensors on any bytes.
pub fn safetensors(data: &[u8]) {
    let names = safetensors::SafeTensors::deserialize(data)
        .map(|f| f.names().into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    each_member(data, names, ndgather_cli::archive::safetensors_tensor);
}

/// Loads the first few `names` of the file `data` with `load`, and no name, and reads each
/// array that loads whole.
fn each_member(
    data: &[u8],
    names: Vec<String>,
    load: fn(&str, Buffer, Option<&str>) -> Result<Loaded, CliError>,
) {
    let members = names.iter().take(4).map(|n| Some(n.as_str()));
    for member in members.chain([None]) {
        if let Ok(loaded) = load("fuzz", Buffer::Heap(data.to_vec()), member) {
            let _ = loaded.into_tensor();
        }
    }
}

/// The CLI's inline literals on any text, and the result printed as the CLI prints it.
pub fn literal(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = ndgather_cli::literal::parse(text) {
        let printed = ndgather_cli::print::format(&t, &Default::default());
        assert!(printed.starts_with("shape="), "{printed}");
    }
}

/// The op a byte picks, with fuzzed options.
fn op(b: &mut Bytes<'_>) -> Op {
    let (axis, bd, policy) = (b.small_int(), b.small_int(), b.policy());
    match b.byte() % 3 {
        0 => Op::Gather(
            GatherOptions::new()
                .axis(axis)
                .batch_dims(bd)
                .bad_indices(policy),
        ),
        1 => Op::GatherNd(GatherNdOptions::new().batch_dims(bd).bad_indices(policy)),
        _ => Op::TakeAlongAxis(TakeAlongAxisOptions::new(axis).bad_indices(policy)),
    }
}

/// The path for small calls on fuzzed operands (records of 1 to 16 bytes as raw contiguous
/// bytes into a new output, which the core takes it for; int32 or int64 indices): the same
/// bytes and errors as the general path, into a caller's records (which the small path never
/// writes). Both go through the one door, `OpDef::run`. A slot it leaves unwritten is an
/// error of the fresh output's check in the checked builds that run this body.
pub fn small_call(data: &[u8]) {
    let mut b = Bytes(data);
    let pshape = b.shape(4);
    let ishape = b.shape(3);
    let itemsize = [1, 2, 3, 4, 8, 16, 0][usize::from(b.byte()) % 7];
    let op = op(&mut b);
    let (wide, fill) = (b.byte().is_multiple_of(2), b.byte() % 3);
    let op = match fill {
        0 => op.with_fill_value(FillValue::bytes(&vec![0xA5; itemsize]).unwrap_or_default()),
        1 => op.with_fill_value(FillValue::Int(-1)),
        _ => op,
    };
    let Some(n) = checked_numel(&pshape).filter(|&n| n <= 4096) else {
        return;
    };
    let Some(indices) = small_array(&ishape, |_| b.index()) else {
        return;
    };
    let params: Vec<u8> = (0..n * itemsize).map(|k| k as u8).collect();
    let index_tensor = if wide {
        Tensor::from(indices)
    } else {
        Tensor::from(indices.mapv(|v| v as i32))
    };
    let Some(raw) = RawView::of_bytes(&params, &pshape, itemsize) else {
        return;
    };
    let Some(full) = general_path::into_records(&op, raw.clone(), index_tensor.view()) else {
        return; // an output too large to compare
    };
    assert!(!matches!(full, Err(Error::Internal(_))), "{full:?}");
    let small = general_path::fresh(&op, raw.clone(), index_tensor.view());
    // Into a caller's row-major records (the small path's too, which writes nothing on error).
    if let Some(direct) = general_path::into_row_major(&op, raw, index_tensor.view()) {
        assert_eq!(
            direct, full,
            "the small path into records and the general one disagree"
        );
    }
    // The same elements laid out apart, into a new output: the strided reads.
    let (apart, strides) = general_path::spaced(&params, &pshape, itemsize);
    if let Some(apart) = RawView::within(&apart, 0, &pshape, &strides, itemsize) {
        let strided = general_path::fresh(&op, apart, index_tensor.view());
        assert_eq!(
            strided, full,
            "the strided path and the general one disagree"
        );
    }
    // And backwards, with negative strides.
    let (back, offset, strides) = general_path::reversed(&params, &pshape, itemsize);
    if let Some(back) = RawView::within(&back, offset, &pshape, &strides, itemsize) {
        let strided = general_path::fresh(&op, back, index_tensor.view());
        assert_eq!(
            strided, full,
            "the backward path and the general one disagree"
        );
    }
    assert_eq!(small, full, "the small path and the general one disagree");
}

/// Row splits of a fuzzed length and values: usually valid, sometimes not (a first split
/// that is not 0, splits that fall, a last one past the values), and of either type.
fn splits(b: &mut Bytes<'_>, rows: usize) -> RowSplits<'static> {
    let count = usize::from(b.byte() % 5);
    let mut at = 0i64;
    let mut s = vec![0i64];
    for _ in 0..count {
        at = at.saturating_add(match b.byte() {
            250 => i64::MIN / 2,
            251 => i64::MAX / 2,
            252 => -1,
            v => i64::from(v % 4),
        });
        s.push(at);
    }
    if !b.byte().is_multiple_of(4) {
        // Most ragged tensors are valid: the last split is the values' row count.
        *s.last_mut().unwrap_or(&mut 0) = rows as i64;
    }
    if b.byte().is_multiple_of(2) {
        RowSplits::from(s)
    } else {
        RowSplits::from(s.iter().map(|&v| v as i32).collect::<Vec<i32>>())
    }
}

/// An operand: its values (made by `value`) and, if a byte says so, one or two levels of
/// splits over them.
fn operand<T: ndgather::TensorElement>(
    b: &mut Bytes<'_>,
    mut value: impl FnMut(&mut Bytes<'_>, usize) -> T,
) -> Option<(Tensor, Vec<RowSplits<'static>>)> {
    let shape = b.shape(3);
    let levels = b.byte() % 3;
    let values = small_array(&shape, |k| value(b, k))?;
    let mut rows = shape.first().copied().unwrap_or(0);
    let mut all = Vec::new();
    for _ in 0..levels {
        let s = splits(b, rows);
        rows = s.len().saturating_sub(1);
        all.insert(0, s);
    }
    Some((T::into_tensor(values), all))
}

/// A ragged tensor's view, or the dense values' (`None` for splits it refuses).
fn view<'a>(values: &'a Tensor, splits: &'a [RowSplits<'static>]) -> Option<Input<'a>> {
    if splits.is_empty() {
        return Some(Input::Tensor(values.view()));
    }
    let splits = splits.iter().map(RowSplits::view).collect();
    RaggedView::new(values.view(), splits)
        .ok()
        .map(Input::Ragged)
}

/// Gathers with ragged params and indices (valid and invalid splits, int32 and int64):
/// never a panic, and a result that is itself a valid ragged tensor.
pub fn ragged(data: &[u8]) {
    let mut b = Bytes(data);
    let op = op(&mut b);
    let Some((pvalues, psplits)) = operand(&mut b, |_, k| k as i16) else {
        return;
    };
    let Some((ivalues, isplits)) = operand(&mut b, |b, _| b.index()) else {
        return;
    };
    let (Some(params), Some(indices)) = (view(&pvalues, &psplits), view(&ivalues, &isplits)) else {
        return;
    };
    // A dense result has no splits: only a ragged one has splits to check.
    if let Ok(Some(Value::Ragged(out))) = OpDef::run(&op, &[params, indices], Out::New) {
        let splits = out.splits.iter().map(RowSplits::view).collect();
        if let Err(e) = RaggedView::new(out.values.view(), splits) {
            panic!("the result is not a valid ragged tensor: {e}");
        }
    }
}
