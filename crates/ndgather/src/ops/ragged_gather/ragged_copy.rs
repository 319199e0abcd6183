//! The copy after the walk: the leaves' values, by the dense gather or gather_nd, or as
//! whole runs of values rows where the walk stopped before params' last ragged dimension.

use super::ragged_walk::{reserve, Call, Walked};
use super::FILLED;
use crate::engine::layout::into_array;
use crate::engine::ranges;
use crate::ops::gather::{GatherNdOptions, GatherOptions};
use crate::ops::{Op, Out, Params};
use crate::types::dtype::{Tensor, TensorView};
use crate::types::error::{Error, Result};
use crate::types::index::BadIndices;
use crate::types::value::FillValue;
use crate::with_tensor;

/// Copies each leaf's run of values rows (the walk stopped before params' last ragged
/// dimension, the output's last): the output's values and its ragged dimensions' splits.
pub(super) fn copy_runs(
    call: &Call,
    walked: Walked,
    values: &TensorView<'_>,
) -> Result<(Tensor, Vec<Vec<i64>>)> {
    let Walked {
        leaves, mut splits, ..
    } = walked;
    let last = &call.params.splits[call.params.ragged_rank() - 1];
    let mut starts = reserve(leaves.len())?;
    let mut offsets = reserve(leaves.len() + 1)?;
    offsets.push(0usize);
    let mut total = 0usize;
    for &leaf in &leaves {
        let (start, len) = match leaf {
            FILLED => (0, 0),
            p => (last.at(p), last.at(p + 1) - last.at(p)),
        };
        starts.push(start);
        total += len;
        offsets.push(total);
    }
    drop(leaves);
    let mut shape = values.shape().to_vec();
    shape[0] = total;
    let block: usize = shape[1..].iter().product();
    let out = with_tensor!(TensorView, values, fixed a => {
        let slice = a.as_slice().ok_or(Error::Internal("checked contiguous"))?;
        let data = ranges::concat_rows(slice, block, &starts, &offsets, &shape)?;
        Tensor::from(into_array(&shape, data)?)
    }, else _dtype => return Err(Error::Internal("runs of fixed-width values only")));
    // The last dimension is ragged unless it is the output's first.
    if call.plan.before.len() + call.plan.after.len() > 1 {
        splits.push(offsets.into_iter().map(|o| o as i64).collect());
    }
    Ok((out, splits))
}

/// The leading shape of the result's values: the rows of the dimension after its last
/// ragged one, then the uniform dimensions up to the leaves.
pub(super) fn lead_shape(call: &Call, counts: &[usize]) -> Vec<usize> {
    let keep = call.ragged_rank();
    let mut lead: Vec<usize> = match counts.len() {
        0 => vec![],
        _ => vec![counts[keep]],
    };
    lead.extend((keep + 1..counts.len()).map(|t| call.size(t, counts)));
    lead
}

/// Copies the leaves' values: the output's values and its ragged dimensions' splits.
pub(super) fn finish(
    call: &Call,
    walked: Walked,
    values: Params<'_>,
    fill: FillValue,
) -> Result<(Tensor, Vec<Vec<i64>>)> {
    let Walked {
        leaves,
        counts,
        splits,
        filled,
    } = walked;
    let params = call.params;
    let r = params.ragged_rank();
    let lead = lead_shape(call, &counts);
    let depth = call.plan.level - r;
    let policy = if filled {
        call.policy
    } else {
        BadIndices::Error
    };
    // Depth 1 is a row gather: the dense gather takes the leaves themselves as indices
    // (a filled one out of range), which also lets a filled index read nothing from values
    // with no rows, the only depth where that occurs.
    let index = if depth == 1 {
        // A filled leaf (`usize::MAX`) is out of range as a `u64` too.
        let rows: Vec<u64> = bytemuck::allocation::try_cast_vec(leaves)
            .unwrap_or_else(|(_, v)| v.into_iter().map(|l| l as u64).collect());
        let o = GatherOptions::new()
            .axis(0)
            .bad_indices(policy)
            .fill_value(fill);
        (Op::Gather(o), Tensor::from(into_array(&lead, rows)?))
    } else {
        let shape = params.shape;
        let mut index = reserve(leaves.len().saturating_mul(depth))?;
        for &leaf in &leaves {
            if leaf == FILLED {
                index.push(shape[0] as i64);
                index.extend(std::iter::repeat_n(0i64, depth - 1));
                continue;
            }
            let start = index.len();
            let mut rest = leaf;
            for &d in shape[..depth].iter().rev() {
                index.push((rest % d.max(1)) as i64);
                rest /= d.max(1);
            }
            index[start..].reverse();
        }
        let o = GatherNdOptions::new().bad_indices(policy).fill_value(fill);
        let mut index_shape = lead;
        index_shape.push(depth);
        (
            Op::GatherNd(o),
            Tensor::from(into_array(&index_shape, index)?),
        )
    };
    let (op, index) = index;
    let out = op
        .run(values, &index.view(), Out::New)?
        .ok_or(Error::Internal("a run into a new output returns it"))?;
    index.recycle();
    Ok((out, splits))
}
