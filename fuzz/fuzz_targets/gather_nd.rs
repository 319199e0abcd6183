//! gather_nd on fuzzed shapes, options and indices: never a panic, and where the reference
//! can say, the same result.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ndgather::{GatherError, GatherNdOptions};

#[allow(dead_code)]
#[path = "../../crates/ndgather/tests/common/reference.rs"]
mod reference;
mod input;

fuzz_target!(|data: &[u8]| {
    let mut b = input::Bytes(data);
    let pshape = b.shape(4);
    let ishape = b.shape(3);
    let (bd, policy) = (b.small_int(), b.policy());
    let Some(params) = input::small_array(&pshape, |k| k as u8) else {
        let _ = ndgather::shape::gather_nd_shape(&pshape.as_slice().into(), &ishape.as_slice().into(), bd, None);
        return;
    };
    let Some(indices) = input::small_array(&ishape, |_| b.index()) else { return };
    let o = GatherNdOptions::new().batch_dims(bd).bad_indices(policy);
    let ours = o.gather_nd(&params, &indices);
    let _ = o.gather_nd(&params, &indices.mapv(|v| v as u16));
    let rule = ndgather::shape::gather_nd_shape(&pshape.as_slice().into(), &ishape.as_slice().into(), bd, None);
    // The reference walks every output position: only for outputs of a sane size.
    if rule.as_ref().is_ok_and(|r| r.output.num_elements().is_none_or(|n| n > 1 << 16)) {
        return;
    }
    match (rule, ours) {
        (Err(e), ours) => assert_eq!(ours.unwrap_err(), e),
        (Ok(_), Err(GatherError::BadIndexVector { position, values, .. })) => {
            match reference::gather_nd(&params, &indices, bd as usize, policy) {
                Err(reference::RefError::BadIndexVector(p, v)) => {
                    assert_eq!(position, p);
                    assert!(values.iter().copied().eq(v.iter().map(|&x| x as i128)));
                }
                other => panic!("reference {other:?}"),
            }
        }
        (Ok(_), Err(e)) => panic!("error after the shape rule passed: {e}"),
        (Ok(_), Ok(x)) => assert_eq!(x, reference::gather_nd(&params, &indices, bd as usize, policy).unwrap()),
    }
});
