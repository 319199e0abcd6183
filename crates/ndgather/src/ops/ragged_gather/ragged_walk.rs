//! The ragged walk: from a checked plan, each output dimension's nodes in order, down to
//! the leaves (the params rows that the dense copy reads) and the splits of the output's
//! ragged dimensions.

use super::{Levels, Pick, RaggedPlan, Step, CHUNK_ROWS, FILLED};
use crate::mem::recycle;
use crate::types::error::{Error, Result};
use crate::types::index::{BadIndices, IndexType};
use crate::types::ragged::RowSplits;

/// A planned call and what its walk reads.
pub(super) struct Call<'c, 'v, 'a, 'b> {
    pub(super) plan: &'c RaggedPlan,
    pub(super) params: &'c Levels<'v, 'a>,
    pub(super) indices: &'c Levels<'v, 'b>,
    pub(super) ragged_indices: bool,
    pub(super) policy: BadIndices,
}

/// The walk's result: the leaves (params rows at the plan's level, or [`FILLED`]), each
/// output dimension's node count, and the splits of the output's ragged dimensions.
pub(super) struct Walked {
    pub(super) leaves: Vec<usize>,
    pub(super) counts: Vec<usize>,
    pub(super) splits: Vec<Vec<i64>>,
    pub(super) filled: bool,
}

/// A vector of `len` slots reserved up front, so that a huge output is an error, not an abort.
pub(super) fn reserve<T>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::OutOfMemory {
        bytes: len.saturating_mul(std::mem::size_of::<T>()),
    })?;
    Ok(v)
}

/// The splits of output dimension `t` over `rows` rows, begun, where the output keeps them
/// (its ragged dimensions, `1..=keep`).
fn level_splits(t: usize, keep: usize, rows: usize) -> Result<Option<Vec<i64>>> {
    if t == 0 || t > keep {
        return Ok(None);
    }
    let mut s = reserve(rows + 1)?;
    s.push(0i64);
    Ok(Some(s))
}

/// An empty vector for about `hint` leaves: the memory of an earlier call's leaves where
/// the pool kept it (they go to the dense gather as its `u64` indices, which are given
/// back after it), so that a repeated call does not fault in fresh pages for them.
fn kept_leaves(hint: usize) -> Vec<usize> {
    match recycle::take::<u64>(hint) {
        Some(v) => bytemuck::allocation::try_cast_vec(v).unwrap_or_default(),
        None => vec![],
    }
}

/// Room for `more` slots in `v`, or an error rather than an abort.
fn grow<T>(v: &mut Vec<T>, more: usize) -> Result<()> {
    v.try_reserve(more).map_err(|_| Error::OutOfMemory {
        bytes: more.saturating_mul(std::mem::size_of::<T>()),
    })
}

impl Call<'_, '_, '_, '_> {
    /// Output dimension `t`'s size where its source dimension is uniform (in both operands,
    /// for a batch dimension); `None` where it is ragged.
    fn uniform_size(&self, t: usize) -> Option<usize> {
        match self.plan.before.get(t) {
            Some(Step::Batch(d)) => self.indices.size(*d).and(self.params.size(*d)),
            Some(Step::Params(d)) => self.params.size(*d),
            Some(Step::Indices(d)) => self.indices.size(*d),
            None => self
                .params
                .size(self.plan.after[t - self.plan.before.len()]),
        }
    }

    /// Whether output dimension `t` is ragged (dimension 0 never is).
    fn is_ragged(&self, t: usize) -> bool {
        t >= 1 && self.uniform_size(t).is_none()
    }

    /// Output dimension `t`'s size, where it is uniform: the first's is its node count.
    pub(super) fn size(&self, t: usize, counts: &[usize]) -> usize {
        match t {
            0 => counts[0],
            _ => self.uniform_size(t).unwrap_or(0),
        }
    }

    /// The output's ragged rank: its last ragged dimension.
    pub(super) fn ragged_rank(&self) -> usize {
        let dims = self.plan.before.len() + self.plan.after.len();
        (0..dims).rev().find(|&t| self.is_ragged(t)).unwrap_or(0)
    }

    /// Where an index of `indices` is, for a message: row-major coordinates of a dense
    /// `indices` (without its last dimension for a vector), the flat position of a ragged
    /// one's values.
    fn position(&self, flat: usize, shape: &[usize]) -> Vec<usize> {
        if self.ragged_indices {
            return vec![flat];
        }
        let dims = match self.plan.pick {
            Pick::Axis(_) => shape,
            Pick::Vector { .. } => &shape[..shape.len() - 1],
        };
        let mut pos = vec![0; dims.len()];
        let mut rest = flat;
        for (k, &d) in dims.iter().enumerate().rev() {
            pos[k] = rest % d.max(1);
            rest /= d.max(1);
        }
        pos
    }

    /// Builds the output's dimensions up to the leaves: the checks of every index run here,
    /// before any value is copied. With `stop_before_last`, params' last ragged dimension is
    /// left to the caller (its runs are copied whole).
    pub(super) fn walk<I: IndexType>(
        &self,
        idx: &[I],
        index_shape: &[usize],
        stop_before_last: bool,
    ) -> Result<Walked> {
        let walk = |nodes, first, sink: &mut Vec<usize>| {
            self.walk_from(nodes, first, idx, index_shape, stop_before_last, sink)
        };
        let step = match self.plan.before.first() {
            Some(&step) if !self.expanded().is_empty() => step,
            _ => {
                let mut leaves = kept_leaves(idx.len());
                let walked = walk(vec![(0, 0)], 0, &mut leaves)?;
                return Ok(Walked { leaves, ..walked });
            }
        };
        // The output's first dimension is walked in chunks of its rows, so that each level's
        // nodes stay in the cache; the chunks' levels are joined in order.
        let rows = match step {
            Step::Batch(_) | Step::Params(_) => self.params.children(0, 0).1,
            Step::Indices(_) => self.indices.children(0, 0).1,
        };
        if let Some(counts) = self.empty_dense(rows) {
            return Ok(Walked {
                leaves: vec![],
                counts,
                splits: vec![],
                filled: false,
            });
        }
        let mut whole = Walked {
            leaves: kept_leaves(idx.len()),
            counts: vec![rows],
            splits: vec![],
            filled: false,
        };
        if self.ragged_rank() == 0 {
            // A dense output's leaves are counted before the walk and reserved at once, so
            // that billions of rows of a zero-element operand are an error now, not after
            // hours of picks.
            let leaves = (1..self.plan.before.len())
                .try_fold(rows, |n, t| n.checked_mul(self.uniform_size(t)?));
            grow(&mut whole.leaves, leaves.unwrap_or(usize::MAX))?;
        }
        for start in (0..rows).step_by(CHUNK_ROWS) {
            let end = (start + CHUNK_ROWS).min(rows);
            let nodes = (start..end)
                .map(|c| match step {
                    Step::Batch(_) => (c, c),
                    Step::Params(_) => (c, 0),
                    Step::Indices(_) => (0, c),
                })
                .collect();
            let part = walk(nodes, 1, &mut whole.leaves)?;
            for (k, s) in part.splits.into_iter().enumerate() {
                // Splits of dimension k + 1 count the nodes of that dimension's level.
                let offset = whole.counts.get(k + 1).copied().unwrap_or(0) as i64;
                // Fallible growth: a hostile dense dimension of billions of rows is an
                // error here, not an abort.
                match whole.splits.get_mut(k) {
                    Some(w) => {
                        grow(w, s.len() - 1)?;
                        w.extend(s[1..].iter().map(|x| x + offset));
                    }
                    None if k == 0 => {
                        // The first kept dimension has a split per row: all reserved at once.
                        let mut w = reserve(rows.saturating_add(1))?;
                        w.extend(s);
                        whole.splits.push(w);
                    }
                    None => whole.splits.push(s),
                }
            }
            for (j, n) in part.counts.into_iter().enumerate() {
                match whole.counts.get_mut(j + 1) {
                    Some(w) => *w += n,
                    None => whole.counts.push(n),
                }
            }
            whole.filled |= part.filled;
        }
        if rows == 0 {
            // No rows: the later levels are empty, with their splits' one 0.
            let part = walk(vec![], 1, &mut whole.leaves)?;
            whole.splits = part.splits;
            whole.counts.extend(part.counts);
        }
        Ok(whole)
    }

    /// The node counts of a dense output with no leaves (a uniform dimension of size 0
    /// before the pick), which need no walk: nothing is picked, so no index is read, and
    /// walking billions of rows of a zero-element operand would only count them.
    fn empty_dense(&self, rows: usize) -> Option<Vec<usize>> {
        let before = self.plan.before.len();
        if self.ragged_rank() != 0 || (1..before).all(|t| self.uniform_size(t) != Some(0)) {
            return None;
        }
        // A dense output never stops before params' last ragged dimension (it has none).
        let levels = before + self.plan.after.len();
        let mut counts = vec![rows];
        for t in 1..levels {
            let size = self.uniform_size(t)?;
            counts.push(counts[t - 1].saturating_mul(size));
        }
        Some(counts)
    }

    /// The steps expanded one level at a time: all before the pick but the last of
    /// indices' dimensions, which goes with the pick (`pick_children`).
    fn expanded(&self) -> &[Step] {
        let before = &self.plan.before;
        let fused = matches!(before.last(), Some(Step::Indices(_)));
        &before[..before.len() - usize::from(fused)]
    }

    /// [`Call::walk`] from `nodes`, the level after step `first`; the leaves are appended to
    /// `sink` (the returned walk has none).
    fn walk_from<I: IndexType>(
        &self,
        mut nodes: Vec<(usize, usize)>,
        first: usize,
        idx: &[I],
        index_shape: &[usize],
        stop_before_last: bool,
        sink: &mut Vec<usize>,
    ) -> Result<Walked> {
        let keep = self.ragged_rank();
        let (params, indices) = (self.params, self.indices);
        let mut counts = Vec::new();
        let mut splits = Vec::new();
        let before = &self.plan.before;
        let fused = match before.last() {
            Some(&Step::Indices(d)) => Some(d),
            _ => None,
        };
        let expanded = self.expanded();
        for (t, step) in expanded.iter().enumerate().skip(first) {
            let children = |&(p, i): &(usize, usize)| -> Result<(usize, usize, usize)> {
                Ok(match *step {
                    Step::Batch(d) => {
                        let ((ps, pl), (is, il)) = (params.children(d, p), indices.children(d, i));
                        if pl != il {
                            return Err(Error::RaggedValue(format!(
                                "batch shape from indices does not match params shape: in \
                                 batch dimension {d}, a row has {pl} elements in params but \
                                 {il} in indices"
                            )));
                        }
                        (ps, is, pl)
                    }
                    Step::Params(d) => {
                        let (ps, pl) = params.children(d, p);
                        (ps, i, pl)
                    }
                    Step::Indices(d) => {
                        let (is, il) = indices.children(d, i);
                        (p, is, il)
                    }
                })
            };
            let mut total = 0usize;
            for n in &nodes {
                total = total.saturating_add(children(n)?.2);
            }
            let mut next = reserve(total)?;
            let mut level_splits = level_splits(t, keep, nodes.len())?;
            for n in &nodes {
                let (ps, is, len) = children(n)?;
                for c in 0..len {
                    next.push(match step {
                        Step::Batch(_) => (ps + c, is + c),
                        Step::Params(_) => (ps + c, is),
                        Step::Indices(_) => (ps, is + c),
                    });
                }
                if let Some(s) = &mut level_splits {
                    s.push(next.len() as i64);
                }
            }
            splits.extend(level_splits);
            counts.push(next.len());
            nodes = next;
        }
        let b = self.plan.before.len();
        let after = &self.plan.after[..self.plan.after.len() - usize::from(stop_before_last)];
        // Leaves go straight to the sink, or through params' later levels first.
        let mut leaves = vec![];
        let target = if after.is_empty() {
            &mut *sink
        } else {
            &mut leaves
        };
        let filled = match fused {
            Some(d) => {
                let t = before.len() - 1;
                let mut level_splits = level_splits(t, keep, nodes.len())?;
                let start = target.len();
                let filled =
                    self.pick_children(&nodes, d, idx, index_shape, &mut level_splits, target)?;
                splits.extend(level_splits);
                counts.push(target.len() - start);
                filled
            }
            None => self.pick(&nodes, idx, index_shape, target)?,
        };
        drop(nodes);
        for (a, &d) in after.iter().enumerate() {
            let t = b + a;
            let mut total = 0usize;
            for &p in &leaves {
                if p != FILLED {
                    total = total.saturating_add(params.children(d, p).1);
                }
            }
            let mut next = reserve(total)?;
            let mut level_splits = level_splits(t, keep, leaves.len())?;
            for &p in &leaves {
                if p != FILLED {
                    let (ps, pl) = params.children(d, p);
                    next.extend(ps..ps + pl);
                }
                if let Some(s) = &mut level_splits {
                    s.push(next.len() as i64);
                }
            }
            splits.extend(level_splits);
            counts.push(next.len());
            leaves = next;
        }
        sink.extend(leaves);
        Ok(Walked {
            leaves: vec![],
            counts,
            splits,
            filled,
        })
    }

    /// Each node's index (or index vector) picks a row of params; the first bad one in
    /// row-major order is the error, unless the policy fills it.
    fn pick<I: IndexType>(
        &self,
        nodes: &[(usize, usize)],
        idx: &[I],
        index_shape: &[usize],
        out: &mut Vec<usize>,
    ) -> Result<bool> {
        grow(out, nodes.len())?;
        let mut filled = false;
        for &(p, i) in nodes {
            let picked = self.pick_one(p, i, idx, index_shape)?;
            filled |= picked == FILLED;
            out.push(picked);
        }
        Ok(filled)
    }

    /// The params row that index (or index vector) `i` picks among row `p`'s children.
    #[inline]
    fn pick_one<I: IndexType>(
        &self,
        p: usize,
        i: usize,
        idx: &[I],
        index_shape: &[usize],
    ) -> Result<usize> {
        match self.plan.pick {
            Pick::Axis(axis) => {
                let (start, len) = self.params.children(axis, p);
                self.resolve(start, len, idx[i], i, index_shape)
            }
            Pick::Vector { first, depth } => {
                let vector = &idx[i * depth..(i + 1) * depth];
                let mut row = p;
                for (k, &v) in vector.iter().enumerate() {
                    let (start, len) = self.params.children(first + k, row);
                    match self.policy.resolve(v, len) {
                        Some(u) => row = start + u,
                        None if self.fills() => return Ok(FILLED),
                        None => {
                            return Err(Error::RaggedBadIndexVector {
                                position: self.position(i, index_shape),
                                values: vector.iter().map(|v| v.to_i128()).collect(),
                                component: k,
                                value: v.to_i128(),
                                limit: len,
                            })
                        }
                    }
                }
                Ok(row)
            }
        }
    }

    /// Index `v` (at `i` in indices) among the `len` children from `start`.
    #[inline(always)]
    fn resolve<I: IndexType>(
        &self,
        start: usize,
        len: usize,
        v: I,
        i: usize,
        index_shape: &[usize],
    ) -> Result<usize> {
        match self.policy.resolve(v, len) {
            Some(u) => Ok(start + u),
            None if self.fills() => Ok(FILLED),
            None => Err(Error::BadIndex {
                position: self.position(i, index_shape),
                value: v.to_i128(),
                limit: len,
            }),
        }
    }

    fn fills(&self) -> bool {
        matches!(self.policy, BadIndices::Ignore | BadIndices::Fill)
    }

    /// The last of indices' dimensions and the pick in one pass: each node's children share
    /// its params row, whose children are looked up once.
    fn pick_children<I: IndexType>(
        &self,
        nodes: &[(usize, usize)],
        d: usize,
        idx: &[I],
        index_shape: &[usize],
        level_splits: &mut Option<Vec<i64>>,
        out: &mut Vec<usize>,
    ) -> Result<bool> {
        let indices = self.indices;
        if let Pick::Axis(axis) = self.plan.pick {
            if indices.is_ragged(d) && self.params.is_ragged(axis) {
                // Both levels ragged (a per-row gather): their splits read as typed slices.
                let (a, b) = (&self.params.splits[axis - 1], &indices.splits[d - 1]);
                let rows = Rows {
                    nodes,
                    idx,
                    index_shape,
                };
                let start = out.len();
                match (a, b) {
                    (RowSplits::I64(a), RowSplits::I64(b)) => {
                        self.pick_rows(&a[..], &b[..], rows, level_splits, out)?
                    }
                    (RowSplits::I64(a), RowSplits::I32(b)) => {
                        self.pick_rows(&a[..], &b[..], rows, level_splits, out)?
                    }
                    (RowSplits::I32(a), RowSplits::I64(b)) => {
                        self.pick_rows(&a[..], &b[..], rows, level_splits, out)?
                    }
                    (RowSplits::I32(a), RowSplits::I32(b)) => {
                        self.pick_rows(&a[..], &b[..], rows, level_splits, out)?
                    }
                }
                return Ok(self.fills() && out[start..].contains(&FILLED));
            }
        }
        let total = nodes.iter().fold(0usize, |n, &(_, i)| {
            n.saturating_add(indices.children(d, i).1)
        });
        grow(out, total)?;
        let start = out.len();
        for &(p, i) in nodes {
            let (is, il) = indices.children(d, i);
            match self.plan.pick {
                Pick::Axis(axis) => {
                    let (start, len) = self.params.children(axis, p);
                    for (c, &v) in idx[is..is + il].iter().enumerate() {
                        out.push(self.resolve(start, len, v, is + c, index_shape)?);
                    }
                }
                Pick::Vector { .. } => {
                    for c in is..is + il {
                        out.push(self.pick_one(p, c, idx, index_shape)?);
                    }
                }
            }
            if let Some(s) = level_splits {
                s.push((out.len() - start) as i64);
            }
        }
        Ok(self.fills() && out[start..].contains(&FILLED))
    }

    /// [`Call::pick_children`] where indices' level and params' picked level are both
    /// ragged: node `(p, i)`'s indices are `b[i]..b[i + 1]`, each among `a[p]..a[p + 1]`.
    fn pick_rows<I: IndexType, A: SplitAt, B: SplitAt>(
        &self,
        a: A,
        b: B,
        rows: Rows<'_, I>,
        level_splits: &mut Option<Vec<i64>>,
        out: &mut Vec<usize>,
    ) -> Result<()> {
        let total = rows
            .nodes
            .iter()
            .fold(0usize, |n, &(_, i)| n.saturating_add(b.at(i + 1) - b.at(i)));
        grow(out, total)?;
        let start = out.len();
        for &(p, i) in rows.nodes {
            let (is, ie) = (b.at(i), b.at(i + 1));
            let (first, len) = (a.at(p), a.at(p + 1) - a.at(p));
            let row = &rows.idx[is..ie];
            // A row of good indices (the common case) is checked, then written in one
            // pass; one with a bad index goes through its policy index by index.
            if row.iter().all(|v| v.checked_index(len).is_some()) {
                out.extend(
                    row.iter()
                        .map(|v| first + v.checked_index(len).unwrap_or(0)),
                );
            } else {
                for (c, &v) in row.iter().enumerate() {
                    out.push(self.resolve(first, len, v, is + c, rows.index_shape)?);
                }
            }
            if let Some(s) = level_splits {
                s.push((out.len() - start) as i64);
            }
        }
        Ok(())
    }
}

/// The nodes of a pick and the indices they read.
#[derive(Clone, Copy)]
struct Rows<'r, I> {
    nodes: &'r [(usize, usize)],
    idx: &'r [I],
    index_shape: &'r [usize],
}

/// One ragged level's splits as a typed slice, read once per row in the per-row loops
/// (checked: every split is in range and non-negative).
trait SplitAt: Copy {
    fn at(self, k: usize) -> usize;
}

impl SplitAt for &[i32] {
    #[inline(always)]
    fn at(self, k: usize) -> usize {
        self[k] as usize
    }
}

impl SplitAt for &[i64] {
    #[inline(always)]
    fn at(self, k: usize) -> usize {
        self[k] as usize
    }
}
