//! Elements of any fixed size through the registry: `Input::Records` (raw bytes the core
//! views in the unit it chooses), `Out::IntoRecords`, and `run_hosted`, where the core
//! chooses between its path for small calls, which writes into the host's memory, and the
//! general path, which runs through `Host::unlocked`. Each gives the bytes of the same
//! gather on typed elements.

use crate::common;

use ndgather::memory::{RawView, RawViewMut};
use ndgather::ndarray::array;
use ndgather::registry::{self, Attr, Attrs, Host, Input};
use ndgather::{Error, GatherOptions, Op, OpDef, Out, Tensor};
use std::mem::MaybeUninit;

/// Six 3-byte elements in a [3, 2] array: element (i, j) holds bytes 10*(2i+j) + 0..3.
fn elements() -> Vec<u8> {
    (0..6u8)
        .flat_map(|e| [10 * e, 10 * e + 1, 10 * e + 2])
        .collect()
}

/// `op` on `bytes` as [3, 2] elements of 3 bytes on the general path (into a caller's
/// records, which the path for small calls never writes).
fn general(op: &Op, bytes: &[u8], indices: &Tensor) -> Result<Vec<u8>, Error> {
    let raw = RawView::of_bytes(bytes, &[3, 2], 3).unwrap();
    let general = common::general_path::into_records(op, raw, indices.view());
    general.expect("a small output").map(|(_, bytes)| bytes)
}

fn gather(attrs: Attrs) -> Box<dyn ndgather::OpDef> {
    registry::find("gather")
        .unwrap()
        .with_attrs(&attrs)
        .unwrap()
}

/// A host that hands out memory of its own (or none) and counts what it was asked.
#[derive(Default)]
struct TestHost {
    memory: Vec<MaybeUninit<u8>>,
    give: bool,
    /// Where the memory given starts in `memory` (1: not aligned for any wider element).
    offset: usize,
    start: usize,
    allocated: usize,
    unlocked: usize,
}

impl Host for TestHost {
    fn allocate(&mut self, shape: &[usize], itemsize: usize) -> Option<&mut [MaybeUninit<u8>]> {
        self.allocated += 1;
        if !self.give {
            return None;
        }
        let bytes = shape.iter().product::<usize>() * itemsize;
        self.memory = vec![MaybeUninit::new(0xEE); bytes + 16];
        // The memory given starts `offset` bytes past a 16-byte boundary.
        self.start = (16 - self.memory.as_ptr() as usize % 16 + self.offset) % 16;
        Some(&mut self.memory[self.start..self.start + bytes])
    }

    fn unlocked(&mut self, work: &mut (dyn FnMut() + Send)) {
        self.unlocked += 1;
        work();
    }
}

/// `bytes` as [3, 2] records of 3 bytes, with `indices`.
fn as_records<'a>(bytes: &'a [u8], indices: &'a Tensor) -> [Input<'a>; 2] {
    [
        Input::Records(RawView::of_bytes(bytes, &[3, 2], 3).unwrap()),
        Input::from(indices.view()),
    ]
}

impl TestHost {
    /// A host that gives memory of its own.
    fn giving() -> TestHost {
        TestHost {
            give: true,
            ..TestHost::default()
        }
    }

    fn bytes(&self) -> Vec<u8> {
        // SAFETY: every byte was initialised when the memory was made.
        let given = self.memory.len().saturating_sub(16);
        self.memory[self.start..self.start + given]
            .iter()
            .map(|b| unsafe { b.assume_init() })
            .collect()
    }
}

#[test]
fn records_gather_as_their_bytes_in_any_unit() {
    let bytes = elements();
    let indices = Tensor::from(array![2i64, 0].into_dyn());
    let raw = RawView::of_bytes(&bytes, &[3, 2], 3).unwrap();
    let op = gather(Attrs::new());
    let out = op
        .run(
            &[Input::Records(raw), Input::from(indices.view())],
            Out::New,
        )
        .unwrap()
        .unwrap()
        .into_dense()
        .unwrap();
    // The record axis is appended; the unit of 3-byte elements is a byte.
    assert_eq!(out.shape(), [2, 2, 3]);
    let expected: Vec<u8> = [4u8, 5, 0, 1]
        .iter()
        .flat_map(|&e| [10 * e, 10 * e + 1, 10 * e + 2])
        .collect();
    assert_eq!(out.to_bytes().unwrap(), expected);
}

#[test]
fn records_into_a_callers_records_and_sizes_must_agree() {
    let bytes = elements();
    let indices = Tensor::from(array![1i32].into_dyn());
    let op = gather(Attrs::new().with("axis", Attr::Int(1)));
    let mut target = vec![0u8; 9];
    let raw = RawView::of_bytes(&bytes, &[3, 2], 3).unwrap();
    let into = RawViewMut::of_bytes(&mut target, &[3, 1], 3).unwrap();
    let r = op.run(
        &[Input::Records(raw), Input::from(indices.view())],
        Out::IntoRecords(into),
    );
    assert!(matches!(r, Ok(None)), "{r:?}");
    assert_eq!(target, [10, 11, 12, 30, 31, 32, 50, 51, 52]);
    // Records of another size are refused, and the target is unchanged.
    let mut other = vec![7u8; 6];
    let raw = RawView::of_bytes(&bytes, &[3, 2], 3).unwrap();
    let into = RawViewMut::of_bytes(&mut other, &[3, 1], 2).unwrap();
    let r = op.run(
        &[Input::Records(raw), Input::from(indices.view())],
        Out::IntoRecords(into),
    );
    assert!(matches!(r, Err(Error::OpInput { .. })), "{r:?}");
    assert_eq!(other, [7; 6]);
    // That error comes first, before the op's own (an axis out of range here), for records
    // the small path could write as for any other.
    let far = gather(Attrs::new().with("axis", Attr::Int(5)));
    let raw = RawView::of_bytes(&bytes, &[3, 2], 3).unwrap();
    let into = RawViewMut::of_bytes(&mut other, &[3, 1], 2).unwrap();
    let r = far.run(
        &[Input::Records(raw), Input::from(indices.view())],
        Out::IntoRecords(into),
    );
    assert!(
        r.as_ref()
            .is_err_and(|e| e.to_string().contains("3-byte records, out is 2-byte")),
        "{r:?}"
    );
    // Typed params do not write records.
    let typed = Tensor::from(array![[1u8, 2], [3, 4]].into_dyn());
    let mut target = vec![0u8; 2];
    let into = RawViewMut::of_bytes(&mut target, &[2, 1], 1).unwrap();
    let r = op.run(
        &[Input::from(typed.view()), Input::from(indices.view())],
        Out::IntoRecords(into),
    );
    assert!(matches!(r, Err(Error::OpInput { .. })), "{r:?}");
}

#[test]
fn a_fill_element_given_as_bytes_that_are_no_value_of_the_dtype_is_refused() {
    // A bool's byte is 0 or 1; 2 is refused as the op's fill-value error, for a small call
    // and a large one, never an internal one.
    let op = gather(
        Attrs::new()
            .with("bad_indices", Attr::Str("fill".into()))
            .with("fill_value", Attr::Bytes(vec![2])),
    );
    for n in [3, 200_000] {
        let params = Tensor::from(ndgather::ndarray::ArrayD::from_elem(vec![n], true));
        let indices = Tensor::from(array![0i64, 7_000_000].into_dyn());
        let r = op.run(
            &[Input::from(params.view()), Input::from(indices.view())],
            Out::New,
        );
        assert!(matches!(r, Err(Error::FillValue { .. })), "{n}: {r:?}");
    }
}

#[test]
fn the_core_chooses_the_hosts_memory_for_a_small_call() {
    let bytes = elements();
    let indices = Tensor::from(array![2i64, 0].into_dyn());
    let op = gather(Attrs::new());
    let expected = general(&Op::Gather(GatherOptions::new()), &bytes, &indices).unwrap();

    // A small contiguous call: into the host's memory, on the calling thread.
    let mut host = TestHost::giving();
    let inputs = as_records(&bytes, &indices);
    let r = op.run_hosted(&inputs, Out::New, &mut host);
    assert!(matches!(r, Ok(None)), "{r:?}");
    assert_eq!((host.allocated, host.unlocked), (1, 0));
    assert_eq!(host.bytes(), expected);

    // A host with no memory of its own: a new tensor, still on the calling thread.
    let mut host = TestHost::default();
    let r = op
        .run_hosted(&inputs, Out::New, &mut host)
        .unwrap()
        .unwrap();
    assert_eq!(r.into_dense().unwrap().to_bytes().unwrap(), expected);
    assert_eq!((host.allocated, host.unlocked), (1, 0));

    // Strided params: the general path, through `unlocked`.
    let strided = RawView::within(&bytes, 0, &[3], &[6], 3).unwrap();
    let mut host = TestHost::giving();
    let r = op.run_hosted(
        &[Input::Records(strided), Input::from(indices.view())],
        Out::New,
        &mut host,
    );
    let r = r.unwrap().unwrap().into_dense().unwrap();
    assert_eq!(r.to_bytes().unwrap(), [40, 41, 42, 0, 1, 2]);
    assert_eq!((host.allocated, host.unlocked), (0, 1));

    // An op without a small path runs through `unlocked`.
    let seg = registry::find("unsorted_segment_sum").unwrap();
    let seg = seg
        .with_attrs(&Attrs::new().with("num_segments", Attr::Int(2)))
        .unwrap();
    let data = Tensor::from(array![1.0f32, 2.0, 3.0].into_dyn());
    let ids = Tensor::from(array![0i32, 1, 0].into_dyn());
    let mut host = TestHost::giving();
    let r = seg.run_hosted(
        &[Input::from(data.view()), Input::from(ids.view())],
        Out::New,
        &mut host,
    );
    let r = r.unwrap().unwrap().into_dense().unwrap();
    assert_eq!(r, Tensor::from(array![4.0f32, 2.0].into_dyn()));
    assert_eq!((host.allocated, host.unlocked), (0, 1));
}

#[test]
fn a_bad_index_on_the_small_path_is_the_general_paths_error() {
    let bytes = elements();
    let indices = Tensor::from(array![0i64, 7].into_dyn());
    let op = gather(Attrs::new());
    let inputs = as_records(&bytes, &indices);
    let mut host = TestHost::giving();
    let small = op.run_hosted(&inputs, Out::New, &mut host).unwrap_err();
    let general = general(&Op::Gather(GatherOptions::new()), &bytes, &indices).unwrap_err();
    assert_eq!(small, general);
    assert_eq!(small.to_string(), "indices[1] = 7 is not in [0, 3)");
}

/// Under every policy that writes a slot for a bad index, the small path writes every byte
/// of the host's memory (it starts as 0xEE, a byte no element or fill here holds) and
/// agrees with the general path.
#[test]
fn the_hosts_memory_is_written_whole_under_every_policy() {
    let bytes = elements();
    let indices = Tensor::from(array![2i64, -1, 9, 0].into_dyn());
    for (policy, fill) in [
        ("ignore", None),
        ("clamp", None),
        ("wrap", None),
        ("fill", Some(vec![1u8, 2, 3])),
    ] {
        let mut attrs = Attrs::new().with("bad_indices", Attr::Str(policy.into()));
        if let Some(f) = fill.clone() {
            attrs.insert("fill_value", Attr::Bytes(f));
        }
        let op = gather(attrs);
        let inputs = as_records(&bytes, &indices);
        let mut host = TestHost::giving();
        let r = op.run_hosted(&inputs, Out::New, &mut host);
        assert!(matches!(r, Ok(None)), "{policy}: {r:?}");
        assert!(
            !host.bytes().contains(&0xEE),
            "{policy}: {:?}",
            host.bytes()
        );
        let mut typed = Op::Gather(GatherOptions::new())
            .with_bad_indices(ndgather::BadIndices::from_name(policy).unwrap());
        if let Some(f) = &fill {
            typed = typed.with_fill_value(ndgather::FillValue::bytes(f).unwrap());
        }
        let general = general(&typed, &bytes, &indices).unwrap();
        assert_eq!(host.bytes(), general, "{policy}");
    }
}

/// No element is read from an empty view, so any strides and address fit any unit: an op on
/// one gives the op's own error, never an internal one.
#[test]
fn an_empty_view_of_any_layout_is_read_in_its_unit() {
    let bytes = [0u8; 16];
    // 0 x 3 elements of 6 bytes, 7 bytes apart, from an odd address.
    let raw = RawView::within(&bytes, 1, &[0, 3], &[21, 7], 6).unwrap();
    assert_eq!(raw.unit_size(), 2);
    assert_eq!(raw.units::<u16>().unwrap().shape(), &[0, 3, 3]);
    let indices = Tensor::from(array![0i64].into_dyn());
    let inputs = [Input::Records(raw), Input::from(indices.view())];
    let err = OpDef::run(&Op::Gather(GatherOptions::new()), &inputs, Out::New).unwrap_err();
    assert_eq!(err.to_string(), "indices[0] = 0 is not in [0, 0)");
}

/// A shape no array can have, whatever the unit: 2^62 x 0 elements of 16 or 8 bytes (the
/// product of the nonzero lengths times the item size passes `isize::MAX`, as ndarray
/// forbids), or a broadcast of 2^64 elements of 8 or 0 bytes. Under every policy (`Fill`
/// moves bytes, the others the widest unit) and into a new output or a caller's records, it
/// is `ShapeOverflow`, never an internal error.
#[test]
fn a_shape_no_array_can_have_is_a_shape_overflow() {
    use common::general_path::{fresh, into_records};
    use ndgather::{BadIndices, FillValue};
    let eight = [0u8; 8];
    let views = [
        (&eight[..0], [1usize << 62, 0], [0isize, 16], 16),
        (&eight[..0], [1 << 62, 0], [0, 8], 8),
        (&eight[..], [1 << 32, 1 << 32], [0, 0], 8),
        (&eight[..0], [1 << 32, 1 << 32], [0, 0], 0),
    ];
    let none = Tensor::from(ndgather::ndarray::ArrayD::<i64>::zeros(vec![0]));
    for (bytes, shape, strides, itemsize) in views {
        let raw = || RawView::within(bytes, 0, &shape, &strides, itemsize).unwrap();
        for policy in [BadIndices::Error, BadIndices::Fill] {
            let op = Op::Gather(
                GatherOptions::new()
                    .bad_indices(policy)
                    .fill_value(FillValue::Int(-1)),
            );
            for err in [
                fresh(&op, raw(), none.view()).unwrap_err(),
                into_records(&op, raw(), none.view()).unwrap().unwrap_err(),
            ] {
                let overflow = matches!(err, Error::ShapeOverflow { what: "params", .. });
                assert!(overflow, "{shape:?} x {itemsize} {policy:?}: {err}");
            }
        }
    }
}

/// The same shape as ragged values: `ShapeOverflow` too, whatever the unit.
#[test]
fn ragged_values_of_a_shape_no_array_can_have_are_a_shape_overflow() {
    use ndgather::{RaggedView, RowSplits};
    for itemsize in [3, 8] {
        let raw = RawView::within(&[], 0, &[1 << 62, 0], &[0, itemsize as isize], itemsize);
        let splits = vec![RowSplits::from(vec![0i64])];
        let err = RaggedView::of_raw(raw.unwrap(), splits).unwrap_err();
        let overflow = matches!(err, Error::ShapeOverflow { what: "values", .. });
        assert!(overflow, "{itemsize}: {err}");
    }
}

/// A write op's small new output goes into the host's memory: the written tensor copied
/// there, then written in place. The bytes equal a run's new tensor's, for memory aligned for
/// the elements and memory that is not (the result then made apart and copied in), and a
/// failing run gives the same error; nothing runs through `Host::unlocked`.
#[test]
fn a_write_ops_small_new_output_goes_into_the_hosts_memory() {
    let scatter = |name| {
        registry::find(name)
            .unwrap()
            .with_attrs(&Attrs::new())
            .unwrap()
    };
    let reduce = |reduce: &'static str| {
        let a = (Attrs::new().with("dim", Attr::Int(0)))
            .with("reduce", Attr::Str(reduce.to_string().into()));
        registry::find("scatter_reduce")
            .unwrap()
            .with_attrs(&a)
            .unwrap()
    };
    let f32s =
        Tensor::from(array![[1.5f32, -2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 8.0, -9.0]].into_dyn());
    let i64s = Tensor::from(array![[1i64, 2, 3], [4, 5, 6], [7, 8, 9]].into_dyn());
    let u8s = Tensor::from(array![[1u8, 2, 3], [4, 5, 6], [7, 8, 9]].into_dyn());
    let cases = [
        (
            scatter("tensor_scatter_nd_add"),
            array![[2i64], [0]].into_dyn(),
            [2, 3],
        ),
        (
            scatter("tensor_scatter_nd_max"),
            array![[1i64], [1]].into_dyn(),
            [2, 3],
        ),
        (
            scatter("tensor_scatter_nd_update"),
            array![[0i64], [5]].into_dyn(),
            [2, 3],
        ),
        (reduce("prod"), array![[2i64, 0, 1]].into_dyn(), [1, 3]),
        (reduce("amax"), array![[0i64, 7, 1]].into_dyn(), [1, 3]),
    ];
    for (op, indices, updates_shape) in &cases {
        let indices = Tensor::from(indices.clone());
        for tensor in [&f32s, &i64s, &u8s] {
            let updates = Tensor::from_bytes(
                tensor.dtype(),
                updates_shape,
                &tensor.to_bytes().unwrap()
                    [..updates_shape.iter().product::<usize>() * tensor.dtype().size().unwrap()],
            )
            .unwrap();
            let inputs = [
                Input::from(tensor.view()),
                Input::from(indices.view()),
                Input::from(updates.view()),
            ];
            let what = format!("{} on {}", op.name(), tensor.dtype());
            let expected = op
                .run(&inputs, Out::New)
                .map(|v| v.unwrap().into_dense().unwrap());
            for offset in [0, 1] {
                let mut host = TestHost {
                    offset,
                    ..TestHost::giving()
                };
                let r = op.run_hosted(&inputs, Out::New, &mut host);
                assert_eq!((host.allocated, host.unlocked), (1, 0), "{what}");
                match &expected {
                    Ok(t) => {
                        assert!(matches!(r, Ok(None)), "{what}: {r:?}");
                        assert_eq!(
                            host.bytes(),
                            t.to_bytes().unwrap(),
                            "{what}, offset {offset}"
                        );
                    }
                    Err(e) => assert_eq!(r.unwrap_err().to_string(), e.to_string(), "{what}"),
                }
            }
        }
    }
}
