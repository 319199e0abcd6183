//! gather on fuzzed shapes, options and indices: never a panic, and where the reference can
//! say, the same result.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndgather::{GatherError, GatherOptions};

#[allow(dead_code)]
#[path = "../../crates/ndgather/tests/common/reference.rs"]
mod reference;
mod input;

fuzz_target!(|data: &[u8]| {
    let mut b = input::Bytes(data);
    let pshape = b.shape(4);
    let ishape = b.shape(3);
    let (axis, bd, policy, default_axis) = (b.small_int(), b.small_int(), b.policy(), b.byte() % 4 == 0);
    let Some(params) = input::small_array(&pshape, |k| k as i32) else {
        // Shapes too large to build: the shape rule must still answer without panicking.
        let _ = ndgather::shape::gather_shape(&pshape.as_slice().into(), &ishape.as_slice().into(), ndgather::shape::Axis::Given(axis), bd, None);
        return;
    };
    let Some(indices) = input::small_array(&ishape, |_| b.index()) else { return };
    let mut o = GatherOptions::new().batch_dims(bd).bad_indices(policy);
    if !default_axis {
        o = o.axis(axis);
    }
    let ours = o.gather(&params, &indices);
    let narrow = indices.mapv(|v| v as i16);
    let _ = o.gather(&params, &narrow);
    // Compare with the reference where the call is valid.
    let rule = ndgather::shape::gather_shape(
        &pshape.as_slice().into(),
        &ishape.as_slice().into(),
        o.get_axis().map_or(ndgather::shape::Axis::Default, ndgather::shape::Axis::Given),
        bd,
        None,
    );
    if let Ok(rule) = rule {
        let (Some(a), Some(bd)) = (rule.axis, rule.batch_dims) else { panic!("rule unresolved") };
        // The reference walks every output position: only for outputs of a sane size.
        if rule.output.num_elements().is_none_or(|n| n > 1 << 16) {
            return;
        }
        match (ours, reference::gather(&params, &indices, a, bd, policy)) {
            (Ok(x), Ok(y)) => assert_eq!(x, y),
            (Err(GatherError::BadIndex { position, value, .. }), Err(reference::RefError::BadIndex(p, v))) => {
                assert_eq!((position, value), (p, v as i128))
            }
            (x, y) => panic!("ours {x:?}, reference {y:?}"),
        }
    } else {
        assert!(ours.is_err());
    }
});
