//! Every worked example of the documentation pages ndgather was built from (tf.gather in
//! TF 2.14 and r1.4, tf.gather_nd, TF Java's GatherNd), as data: the call as the page writes
//! it, its inputs and its documented result. `ndgather examples` prints them; the tests check
//! them all.
//!
//! ```
//! for example in ndgather_cli::examples::ALL {
//!     example.check().unwrap();
//! }
//! ```

use crate::literal;
use ndgather::registry::{self, Attr, Attrs};
use ndgather::{Out, Tensor};

/// Which op an example calls, with its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `tf.gather`.
    Gather {
        /// `axis`, or `None` for the default.
        axis: Option<i64>,
        /// `batch_dims`.
        batch_dims: i64,
    },
    /// `tf.gather_nd`.
    GatherNd {
        /// `batch_dims`.
        batch_dims: i64,
    },
}

/// An input as the page gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A nested-list literal (see [`crate::literal`]).
    Literal(&'static str),
    /// `tf.zeros(shape)`: float32 zeros.
    Zeros(&'static [usize]),
    /// Stands for `tf.random.normal(shape)`: float32 values 0, 1, 2, … (any values do).
    Iota(&'static [usize]),
    /// Stands for random int32 indices below a bound: `k * 5 % bound` at flat position `k`.
    Indices(&'static [usize], i32),
}

/// What the page says the result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// The values, as a literal.
    Values(&'static str),
    /// Only the shape.
    Shape(&'static [usize]),
}

/// One worked example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocExample {
    /// The page it comes from.
    pub page: &'static str,
    /// The call as the page writes it.
    pub call: &'static str,
    /// The op and options.
    pub op: Op,
    /// params.
    pub params: Input,
    /// indices.
    pub indices: Input,
    /// The documented result.
    pub expected: Expected,
}

impl Input {
    /// The input as the page writes it.
    pub fn describe(&self) -> String {
        match *self {
            Input::Literal(text) => text.to_string(),
            Input::Zeros(shape) => format!("tf.zeros({shape:?})"),
            Input::Iota(shape) => format!("tf.random.normal(shape={shape:?})  # here 0, 1, 2, ..."),
            Input::Indices(shape, bound) => {
                format!("tf.random.uniform(shape={shape:?}, maxval={bound}, dtype=tf.int32)  # here k*5 % {bound}")
            }
        }
    }

    /// The input as a tensor.
    pub fn tensor(&self) -> Result<Tensor, String> {
        let numel = |shape: &[usize]| shape.iter().product::<usize>();
        match *self {
            Input::Literal(text) => return literal::parse(text).map_err(|e| e.to_string()),
            Input::Zeros(shape) => Tensor::from_shape_vec(shape, vec![0f32; numel(shape)]),
            Input::Iota(shape) => {
                Tensor::from_shape_vec(shape, (0..numel(shape)).map(|k| k as f32).collect())
            }
            Input::Indices(shape, bound) => Tensor::from_shape_vec(
                shape,
                (0..numel(shape))
                    .map(|k| (k as i64 * 5 % bound as i64) as i32)
                    .collect(),
            ),
        }
        .map_err(|e| e.to_string())
    }
}

impl DocExample {
    /// Runs the example through the library.
    pub fn run(&self) -> Result<Tensor, String> {
        let params = self.params.tensor()?;
        let indices = self.indices.tensor()?;
        // By name, through the registry, as every front end calls an op.
        let (name, attrs) = match self.op {
            Op::Gather { axis, batch_dims } => {
                let attrs = Attrs::new().with("batch_dims", Attr::Int(batch_dims));
                match axis {
                    Some(axis) => ("gather", attrs.with("axis", Attr::Int(axis))),
                    None => ("gather", attrs),
                }
            }
            Op::GatherNd { batch_dims } => (
                "gather_nd",
                Attrs::new().with("batch_dims", Attr::Int(batch_dims)),
            ),
        };
        let run = || {
            let op = registry::find(name)?.with_attrs(&attrs)?;
            let inputs = [params.view().into(), indices.view().into()];
            op.run(&inputs, Out::New)?
                .ok_or(ndgather::Error::Internal("a new output"))?
                .into_dense()
        };
        run().map_err(|e| e.to_string())
    }

    /// Runs the example and compares it with the documented result.
    pub fn check(&self) -> Result<Tensor, String> {
        let out = self.run()?;
        let ok = match self.expected {
            Expected::Values(text) => literal::parse(text).map_err(|e| e.to_string())? == out,
            Expected::Shape(shape) => out.shape() == shape,
        };
        if ok {
            Ok(out)
        } else {
            Err(format!(
                "{}: expected {:?}, got {:?}",
                self.call, self.expected, out
            ))
        }
    }
}

/// Every worked example, page by page.
pub const ALL: &[DocExample] = &[
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, 3)",
        op: Op::Gather { axis: None, batch_dims: 0 },
        params: Input::Literal("['p0', 'p1', 'p2', 'p3', 'p4', 'p5']"),
        indices: Input::Literal("3"),
        expected: Expected::Values("'p3'"),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, indices)  # indices = [2, 0, 2, 5]",
        op: Op::Gather { axis: None, batch_dims: 0 },
        params: Input::Literal("['p0', 'p1', 'p2', 'p3', 'p4', 'p5']"),
        indices: Input::Literal("[2, 0, 2, 5]"),
        expected: Expected::Values("['p2', 'p0', 'p2', 'p5']"),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, [[2, 0], [2, 5]])",
        op: Op::Gather { axis: None, batch_dims: 0 },
        params: Input::Literal("['p0', 'p1', 'p2', 'p3', 'p4', 'p5']"),
        indices: Input::Literal("[[2, 0], [2, 5]]"),
        expected: Expected::Values("[['p2', 'p0'], ['p2', 'p5']]"),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, indices=[3,1])",
        op: Op::Gather { axis: None, batch_dims: 0 },
        params: Input::Literal("[[0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0], [30.0, 31.0, 32.0]]"),
        indices: Input::Literal("[3, 1]"),
        expected: Expected::Values("[[30.0, 31.0, 32.0], [10.0, 11.0, 12.0]]"),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, indices=[2,1], axis=1)",
        op: Op::Gather { axis: Some(1), batch_dims: 0 },
        params: Input::Literal("[[0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0], [30.0, 31.0, 32.0]]"),
        indices: Input::Literal("[2, 1]"),
        expected: Expected::Values("[[2.0, 1.0], [12.0, 11.0], [22.0, 21.0], [32.0, 31.0]]"),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "result_shape([1, 2, 3], [], axis=1)",
        op: Op::Gather { axis: Some(1), batch_dims: 0 },
        params: Input::Zeros(&[1, 2, 3]),
        indices: Input::Literal("0"),
        expected: Expected::Shape(&[1, 3]),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "result_shape([1, 2, 3], [7], axis=1)",
        op: Op::Gather { axis: Some(1), batch_dims: 0 },
        params: Input::Zeros(&[1, 2, 3]),
        indices: Input::Indices(&[7], 2),
        expected: Expected::Shape(&[1, 7, 3]),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "result_shape([1, 2, 3], [7, 5], axis=1)",
        op: Op::Gather { axis: Some(1), batch_dims: 0 },
        params: Input::Zeros(&[1, 2, 3]),
        indices: Input::Indices(&[7, 5], 2),
        expected: Expected::Shape(&[1, 7, 5, 3]),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, indices=indices, axis=0).shape.as_list()  # indices = [[0, 2]]",
        op: Op::Gather { axis: Some(0), batch_dims: 0 },
        params: Input::Literal("[[0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0], [30.0, 31.0, 32.0]]"),
        indices: Input::Literal("[[0, 2]]"),
        expected: Expected::Shape(&[1, 2, 3]),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, indices=indices, axis=1).shape.as_list()  # indices = [[0, 2]]",
        op: Op::Gather { axis: Some(1), batch_dims: 0 },
        params: Input::Literal("[[0, 1.0, 2.0], [10.0, 11.0, 12.0], [20.0, 21.0, 22.0], [30.0, 31.0, 32.0]]"),
        indices: Input::Literal("[[0, 2]]"),
        expected: Expected::Shape(&[4, 1, 2]),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, indices, axis=2).shape.as_list()  # params (5, 6, 7, 8), indices (10, 11) < 7",
        op: Op::Gather { axis: Some(2), batch_dims: 0 },
        params: Input::Iota(&[5, 6, 7, 8]),
        indices: Input::Indices(&[10, 11], 7),
        expected: Expected::Shape(&[5, 6, 10, 11, 8]),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, indices, axis=1, batch_dims=1)",
        op: Op::Gather { axis: Some(1), batch_dims: 1 },
        params: Input::Literal("[[0, 0, 1, 0, 2], [3, 0, 0, 0, 4], [0, 5, 0, 6, 0]]"),
        indices: Input::Literal("[[2, 4], [0, 4], [1, 3]]"),
        expected: Expected::Values("[[1, 2], [3, 4], [5, 6]]"),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(params, indices, axis=1, batch_dims=1).shape.as_list()",
        op: Op::Gather { axis: Some(1), batch_dims: 1 },
        params: Input::Literal("[[0, 0, 1, 0, 2], [3, 0, 0, 0, 4], [0, 5, 0, 6, 0]]"),
        indices: Input::Literal("[[2, 4], [0, 4], [1, 3]]"),
        expected: Expected::Shape(&[3, 2]),
    },
    DocExample {
        page: "tf.gather (TF 2.14)",
        call: "tf.gather(values, indices, batch_dims=-1)",
        op: Op::Gather { axis: None, batch_dims: -1 },
        params: Input::Literal("[[0, 0, 1, 0, 2], [3, 0, 0, 0, 4], [0, 5, 0, 6, 0]]"),
        indices: Input::Literal("[[2, 4], [0, 4], [1, 3]]"),
        expected: Expected::Values("[[1, 2], [3, 4], [5, 6]]"),
    },
    DocExample {
        page: "tf.gather (TF r1.4)",
        call: "tf.gather(params, 1, axis=1)  # scalar indices: rank(params) - 1",
        op: Op::Gather { axis: Some(1), batch_dims: 0 },
        params: Input::Literal("[[0, 1, 2], [10, 11, 12]]"),
        indices: Input::Literal("1"),
        expected: Expected::Values("[1, 11]"),
    },
    DocExample {
        page: "tf.gather (TF r1.4)",
        call: "tf.gather(params, [2, 0], axis=1)  # vector indices: rank(params)",
        op: Op::Gather { axis: Some(1), batch_dims: 0 },
        params: Input::Literal("[[0, 1, 2], [10, 11, 12]]"),
        indices: Input::Literal("[2, 0]"),
        expected: Expected::Values("[[2, 0], [12, 10]]"),
    },
    DocExample {
        page: "tf.gather (TF r1.4)",
        call: "tf.gather(params, [[0], [2]], axis=1)  # rank(params) + rank(indices) - 1",
        op: Op::Gather { axis: Some(1), batch_dims: 0 },
        params: Input::Literal("[[0, 1, 2], [10, 11, 12]]"),
        indices: Input::Literal("[[0], [2]]"),
        expected: Expected::Values("[[[0], [2]], [[10], [12]]]"),
    },
    DocExample {
        page: "tf.gather (TF r1.4)",
        call: "tf.gather(params, [1, 0])  # axis defaults to the first dimension",
        op: Op::Gather { axis: None, batch_dims: 0 },
        params: Input::Literal("[[0, 1, 2], [10, 11, 12]]"),
        indices: Input::Literal("[1, 0]"),
        expected: Expected::Values("[[10, 11, 12], [0, 1, 2]]"),
    },
    DocExample {
        page: "tf.gather (TF r1.4)",
        call: "tf.gather(params, [0], axis=-1)  # negative axis",
        op: Op::Gather { axis: Some(-1), batch_dims: 0 },
        params: Input::Literal("[[0, 1, 2], [10, 11, 12]]"),
        indices: Input::Literal("[0]"),
        expected: Expected::Values("[[0], [10]]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[0, 0], [1, 1]], params=[['a', 'b'], ['c', 'd']])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[['a', 'b'], ['c', 'd']]"),
        indices: Input::Literal("[[0, 0], [1, 1]]"),
        expected: Expected::Values("['a', 'd']"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[1], [0]], params=[['a', 'b', 'c'], ['d', 'e', 'f']])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[['a', 'b', 'c'], ['d', 'e', 'f']]"),
        indices: Input::Literal("[[1], [0]]"),
        expected: Expected::Values("[['d', 'e', 'f'], ['a', 'b', 'c']]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[1]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[1]]"),
        expected: Expected::Values("[[['a1', 'b1'], ['c1', 'd1']]]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[0, 1], [1, 0]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[0, 1], [1, 0]]"),
        expected: Expected::Values("[['c0', 'd0'], ['a1', 'b1']]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[0, 0, 1], [1, 0, 1]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[0, 0, 1], [1, 0, 1]]"),
        expected: Expected::Values("['b0', 'b1']"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[[0, 0]], [[0, 1]]], params=[['a', 'b'], ['c', 'd']])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[['a', 'b'], ['c', 'd']]"),
        indices: Input::Literal("[[[0, 0]], [[0, 1]]]"),
        expected: Expected::Values("[['a'], ['b']]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[[1]], [[0]]], params=[['a', 'b'], ['c', 'd']])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[['a', 'b'], ['c', 'd']]"),
        indices: Input::Literal("[[[1]], [[0]]]"),
        expected: Expected::Values("[[['c', 'd']], [['a', 'b']]]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[[1]], [[0]]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[[1]], [[0]]]"),
        expected: Expected::Values("[[[['a1', 'b1'], ['c1', 'd1']]], [[['a0', 'b0'], ['c0', 'd0']]]]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[[0, 1], [1, 0]], [[0, 0], [1, 1]]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[[0, 1], [1, 0]], [[0, 0], [1, 1]]]"),
        expected: Expected::Values("[[['c0', 'd0'], ['a1', 'b1']], [['a0', 'b0'], ['c1', 'd1']]]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]]"),
        expected: Expected::Values("[['b0', 'b1'], ['d0', 'c1']]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(indices=[[0, 1], [1, 0], [2, 4], [3, 2], [4, 1]], params=tf.zeros([5, 7, 3])).shape.as_list()",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Zeros(&[5, 7, 3]),
        indices: Input::Literal("[[0, 1], [1, 0], [2, 4], [3, 2], [4, 1]]"),
        expected: Expected::Shape(&[5, 3]),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(batch_dims=1, indices=[[1], [0], [4], [2], [1]], params=tf.zeros([5, 7, 3])).shape.as_list()",
        op: Op::GatherNd { batch_dims: 1 },
        params: Input::Zeros(&[5, 7, 3]),
        indices: Input::Literal("[[1], [0], [4], [2], [1]]"),
        expected: Expected::Shape(&[5, 3]),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "output_shape  # params=tf.zeros([5, 7, 3]), indices=tf.zeros([5, 1]), batch_dims=1",
        op: Op::GatherNd { batch_dims: 1 },
        params: Input::Zeros(&[5, 7, 3]),
        indices: Input::Indices(&[5, 1], 1),
        expected: Expected::Shape(&[5, 3]),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(batch_dims=1, indices=[[1], [0]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 1 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[1], [0]]"),
        expected: Expected::Values("[['c0', 'd0'], ['a1', 'b1']]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(batch_dims=1, indices=[[[1]], [[0]]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 1 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[[1]], [[0]]]"),
        expected: Expected::Values("[[['c0', 'd0']], [['a1', 'b1']]]"),
    },
    DocExample {
        page: "tf.gather_nd (TF 2.x)",
        call: "tf.gather_nd(batch_dims=1, indices=[[[1, 0]], [[0, 1]]], params=[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]])",
        op: Op::GatherNd { batch_dims: 1 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[[1, 0]], [[0, 1]]]"),
        expected: Expected::Values("[['c0'], ['b1']]"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[0, 0], [1, 1]], params = [['a', 'b'], ['c', 'd']]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[['a', 'b'], ['c', 'd']]"),
        indices: Input::Literal("[[0, 0], [1, 1]]"),
        expected: Expected::Values("['a', 'd']"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[1], [0]], params = [['a', 'b'], ['c', 'd']]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[['a', 'b'], ['c', 'd']]"),
        indices: Input::Literal("[[1], [0]]"),
        expected: Expected::Values("[['c', 'd'], ['a', 'b']]"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[1]], params = [[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[1]]"),
        expected: Expected::Values("[[['a1', 'b1'], ['c1', 'd1']]]"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[0, 1], [1, 0]], params = [[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[0, 1], [1, 0]]"),
        expected: Expected::Values("[['c0', 'd0'], ['a1', 'b1']]"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[0, 0, 1], [1, 0, 1]], params = [[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[0, 0, 1], [1, 0, 1]]"),
        expected: Expected::Values("['b0', 'b1']"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[[0, 0]], [[0, 1]]], params = [['a', 'b'], ['c', 'd']]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[['a', 'b'], ['c', 'd']]"),
        indices: Input::Literal("[[[0, 0]], [[0, 1]]]"),
        expected: Expected::Values("[['a'], ['b']]"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[[1]], [[0]]], params = [['a', 'b'], ['c', 'd']]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[['a', 'b'], ['c', 'd']]"),
        indices: Input::Literal("[[[1]], [[0]]]"),
        expected: Expected::Values("[[['c', 'd']], [['a', 'b']]]"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[[1]], [[0]]], params = [[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[[1]], [[0]]]"),
        expected: Expected::Values("[[[['a1', 'b1'], ['c1', 'd1']]], [[['a0', 'b0'], ['c0', 'd0']]]]"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[[0, 1], [1, 0]], [[0, 0], [1, 1]]], params = [[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[[0, 1], [1, 0]], [[0, 0], [1, 1]]]"),
        expected: Expected::Values("[[['c0', 'd0'], ['a1', 'b1']], [['a0', 'b0'], ['c1', 'd1']]]"),
    },
    DocExample {
        page: "GatherNd (TF Java)",
        call: "GatherNd.create(scope, params, indices)  # indices = [[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]], params = [[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]",
        op: Op::GatherNd { batch_dims: 0 },
        params: Input::Literal("[[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"),
        indices: Input::Literal("[[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]]"),
        expected: Expected::Values("[['b0', 'b1'], ['d0', 'c1']]"),
    },
];
