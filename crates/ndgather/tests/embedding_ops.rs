//! The op API's EmbeddingLookup and EmbeddingLookupSparse: eager and in a graph (shapes
//! inferred at creation, values when a session runs), equal to the library's functions.

use ndarray::{array, ArrayD};
use ndgather::embedding::{
    Combiner, EmbeddingLookupOptions as Lookup, PartitionStrategy, SparseIds,
};
use ndgather::graph::{
    Constant, EmbeddingLookup, EmbeddingLookupSparse, EmbeddingOpOptions, Feeds, Operand,
    Placeholder, Scope, Session,
};
use ndgather::shape::Shape;

fn table() -> (ArrayD<f32>, ArrayD<f32>) {
    // Ids 0..5 split "div" over two shards: [0, 1, 2] and [3, 4].
    (
        array![[0.0f32, 0.5], [1.0, 1.5], [2.0, 2.5]].into_dyn(),
        array![[3.0f32, 3.5], [4.0, 4.5]].into_dyn(),
    )
}

#[test]
fn eager_and_graph_lookups_agree_with_the_library() {
    let (a, b) = (table().0, table().1);
    let ids = array![[4i64, 0], [2, 3]].into_dyn();
    let options = EmbeddingOpOptions::new()
        .partition_strategy(PartitionStrategy::Div)
        .max_norm(Some(4.0));
    let library = Lookup::new()
        .partition_strategy(PartitionStrategy::Div)
        .max_norm(Some(4.0))
        .lookup(&[a.view(), b.view()], &ids)
        .unwrap();

    let eager = Scope::eager();
    let shards = [
        Constant::create(&eager, a.clone()).unwrap().as_output(),
        Constant::create(&eager, b.clone()).unwrap().as_output(),
    ];
    let i = Constant::create(&eager, ids.clone()).unwrap();
    let op = EmbeddingLookup::create(&eager, &shards, &i, options).unwrap();
    assert_eq!(op.output().value().unwrap(), library);

    let graph = Scope::graph();
    let p0 = Placeholder::<f32>::create(&graph, Shape::from_dims(vec![None, Some(2)])).unwrap();
    let p1 = Placeholder::<f32>::create(&graph, Shape::unknown_dims(2)).unwrap();
    let ip = Placeholder::<i64>::create(&graph, Shape::known(&[2, 2])).unwrap();
    let op = EmbeddingLookup::create(&graph, &[p0.output(), p1.output()], &ip, options).unwrap();
    assert_eq!(
        op.output().shape(),
        Shape::from_dims(vec![Some(2), Some(2), Some(2)])
    );
    let feeds = Feeds::new()
        .feed(&p0, a.clone())
        .unwrap()
        .feed(&p1, b.clone())
        .unwrap()
        .feed(&ip, ids.clone())
        .unwrap();
    let out = Session::new(&graph).run(&op.output(), &feeds).unwrap();
    assert_eq!(out, library);
    // An id past the table, reported when the graph runs.
    let bad = Feeds::new()
        .feed(&p0, a)
        .unwrap()
        .feed(&p1, b)
        .unwrap()
        .feed(&ip, array![[5i64, 0], [0, 0]].into_dyn())
        .unwrap();
    let e = Session::new(&graph).run(&op.output(), &bad).unwrap_err();
    assert_eq!(e.to_string(), "indices[0,0] = 5 is not in [0, 5)");
}

#[test]
fn sparse_lookup_op_agrees_with_the_library() {
    let (a, b) = table();
    let indices = array![[0i64, 0], [0, 1], [2, 0]];
    let values = array![1i64, 4, 3];
    let weights = array![2.0f32, 0.5, 1.0];
    let dense_shape = [3usize, 2];
    let sp = SparseIds::new(indices.view(), values.view(), &dense_shape).unwrap();
    let sw = SparseIds::new(indices.view(), weights.view(), &dense_shape).unwrap();
    let library = Lookup::new()
        .partition_strategy(PartitionStrategy::Div)
        .lookup_sparse(&[a.view(), b.view()], &sp, Some(&sw), Combiner::SqrtN)
        .unwrap();
    let options = EmbeddingOpOptions::new()
        .partition_strategy(PartitionStrategy::Div)
        .combiner(Combiner::SqrtN);
    for scope in [Scope::eager(), Scope::graph()] {
        let c = |v: ArrayD<f32>| Constant::create(&scope, v).unwrap().as_output();
        let shards = [c(a.clone()), c(b.clone())];
        let ix = Constant::create(&scope, indices.clone().into_dyn()).unwrap();
        let ids = Constant::create(&scope, values.clone().into_dyn()).unwrap();
        let shape = Constant::create(&scope, array![3i64, 2].into_dyn()).unwrap();
        let w = Constant::create(&scope, weights.clone().into_dyn()).unwrap();
        let op =
            EmbeddingLookupSparse::create(&scope, &shards, (&ix, &ids, &shape), Some(&w), options)
                .unwrap();
        assert_eq!(op.output().shape(), Shape::known(&[3, 2]));
        let out = if scope.is_eager() {
            op.output().value().unwrap()
        } else {
            Session::new(&scope)
                .run(&op.output(), &Feeds::new())
                .unwrap()
        };
        assert_eq!(out, library);
    }
}

#[test]
fn gather_nd_op_takes_the_fill_policy() {
    use ndgather::graph::{GatherNd, GatherNdOpOptions};
    use ndgather::{BadIndices, FillValue};
    let scope = Scope::eager();
    let p = Constant::create(&scope, array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()).unwrap();
    let i = Constant::create(&scope, array![[1, 0], [7, 0]].into_dyn()).unwrap();
    let options = GatherNdOpOptions::new()
        .bad_indices(BadIndices::Fill)
        .fill_value(FillValue::float(-1.0));
    let op = GatherNd::create(&scope, &p, &i, options).unwrap();
    assert_eq!(
        op.output().value().unwrap(),
        array![3.0f32, -1.0].into_dyn()
    );
}
