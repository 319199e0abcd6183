//! How a table's ids are assigned to its shards: TensorFlow's `partition_strategy`.

/// How ids are assigned to the shards of a table (TensorFlow 1.x's `partition_strategy`;
/// TensorFlow 2's `embedding_lookup` always uses `Div`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PartitionStrategy {
    /// Id `i` is row `i / n` of shard `i % n`.
    #[default]
    Mod,
    /// Ids are split into `n` contiguous ranges, the first `total % n` one id longer.
    Div,
}

impl PartitionStrategy {
    /// `"mod"` or `"div"`.
    pub fn from_name(name: &str) -> Option<PartitionStrategy> {
        match name {
            "mod" => Some(PartitionStrategy::Mod),
            "div" => Some(PartitionStrategy::Div),
            _ => None,
        }
    }

    /// Rows per shard when TensorFlow's `embedding_lookup` splits a table of `total` rows
    /// into `n` shards: `Mod` gives shard `p` the rows `p, p + n, …`; `Div` gives each
    /// `total / n`, the first `total % n` one more.
    ///
    /// ```
    /// use ndgather::embedding::PartitionStrategy;
    /// assert_eq!(PartitionStrategy::Mod.shard_rows(10, 3), [4, 3, 3]);
    /// assert_eq!(PartitionStrategy::Div.shard_rows(10, 4), [3, 3, 2, 2]);
    /// ```
    pub fn shard_rows(self, total: usize, n: usize) -> Vec<usize> {
        let n = n.max(1);
        (0..n)
            .map(|p| match self {
                PartitionStrategy::Mod => (total + n - 1 - p) / n,
                PartitionStrategy::Div => total / n + usize::from(p < total % n),
            })
            .collect()
    }

    /// The shard and the row in it of `row` of the whole table split into shards of
    /// `shard_rows` rows: by `row % n` for `Mod`, by contiguous ranges in order for `Div`
    /// (shards of any sizes, as files may hold). `None` for a row past the table.
    ///
    /// ```
    /// use ndgather::embedding::PartitionStrategy;
    /// assert_eq!(PartitionStrategy::Mod.route(&[4, 3, 3], 7), Some((1, 2)));
    /// assert_eq!(PartitionStrategy::Div.route(&[5, 1, 4], 6), Some((2, 0)));
    /// assert_eq!(PartitionStrategy::Div.route(&[5, 1, 4], 10), None);
    /// ```
    pub fn route(self, shard_rows: &[usize], row: usize) -> Option<(usize, usize)> {
        let n = shard_rows.len();
        let (shard, local) = match self {
            _ if n == 0 => return None,
            PartitionStrategy::Mod => (row % n, row / n),
            PartitionStrategy::Div => {
                let mut start = 0usize;
                let shard = shard_rows.iter().position(|&r| {
                    start += r;
                    row < start
                })?;
                (shard, row - (start - shard_rows[shard]))
            }
        };
        (local < shard_rows[shard]).then_some((shard, local))
    }
}
