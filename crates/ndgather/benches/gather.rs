//! Criterion benchmarks of the kernels, one per shape of work: long rows, short rows, scalars
//! (random and sorted), columns, batch_dims, gather_nd elements and slices, strings, and the
//! per-call overhead. Fresh outputs (`alloc`) and reused buffers (`into`). And the scatters
//! of gradients.
//! `cargo bench -p ndgather`; for the suite of `shared/bench`, use `ndgather bench`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ndarray::{ArrayD, IxDyn};
use ndgather::{GatherNdOptions, GatherOptions};
use std::hint::black_box;

fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn table(shape: &[usize]) -> ArrayD<f32> {
    let mut s = 7u64;
    ArrayD::from_shape_simple_fn(IxDyn(shape), || (rng(&mut s) % 1000) as f32)
}

fn idx(shape: &[usize], high: usize, sorted: bool) -> ArrayD<i32> {
    let mut s = 11u64;
    let mut v: Vec<i32> = (0..shape.iter().product())
        .map(|_| (rng(&mut s) % high as u64) as i32)
        .collect();
    if sorted {
        v.sort_unstable();
    }
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

/// (name, params shape, indices shape, axis, batch_dims, sorted indices)
type GatherCase = (
    &'static str,
    &'static [usize],
    &'static [usize],
    i64,
    i64,
    bool,
);

fn gathers(c: &mut Criterion) {
    let mut g = c.benchmark_group("gather");
    g.sample_size(20);
    let cases: &[GatherCase] = &[
        ("rows_512B", &[100_000, 128], &[20_000], 0, 0, false),
        ("rows_16B", &[100_000, 4], &[200_000], 0, 0, false),
        ("scalars_random", &[1_000_000], &[1_000_000], 0, 0, false),
        ("scalars_sorted", &[1_000_000], &[1_000_000], 0, 0, true),
        ("columns", &[2000, 2000], &[500], 1, 0, false),
        ("batch_topk", &[512, 8192], &[512, 256], 1, 1, false),
        ("tiny", &[8, 4], &[3], 0, 0, false),
    ];
    for &(name, pshape, ishape, axis, bd, sorted) in cases {
        let p = table(pshape);
        let i = idx(ishape, pshape[axis as usize], sorted);
        let o = GatherOptions::new().axis(axis).batch_dims(bd);
        let out = o.gather(&p, &i).unwrap();
        g.throughput(Throughput::Bytes((2 * out.len() * 4 + i.len() * 4) as u64));
        g.bench_function(BenchmarkId::new("alloc", name), |b| {
            b.iter(|| black_box(o.gather(&p, &i).unwrap()))
        });
        let mut buf = out.clone();
        g.bench_function(BenchmarkId::new("into", name), |b| {
            b.iter(|| o.gather_into(&p, &i, buf.view_mut()).unwrap())
        });
    }
    g.finish();
}

fn gather_nds(c: &mut Criterion) {
    let mut g = c.benchmark_group("gather_nd");
    g.sample_size(20);
    let cases: &[(&str, &[usize], &[usize], i64)] = &[
        ("elements", &[1000, 1000], &[500_000, 2], 0),
        ("slices_128B", &[300, 300, 32], &[100_000, 2], 0),
        ("batch_1KiB", &[8, 1000, 256], &[8, 2000, 1], 1),
    ];
    for &(name, pshape, ishape, bd) in cases {
        let p = table(pshape);
        let depth = ishape[ishape.len() - 1];
        let mut s = 5u64;
        let i = ArrayD::from_shape_fn(IxDyn(ishape), |ix| {
            let c = ix[ishape.len() - 1];
            (rng(&mut s) % pshape[bd as usize + c % depth] as u64) as i32
        });
        let o = GatherNdOptions::new().batch_dims(bd);
        let out = o.gather_nd(&p, &i).unwrap();
        g.throughput(Throughput::Bytes((2 * out.len() * 4 + i.len() * 4) as u64));
        g.bench_function(BenchmarkId::new("alloc", name), |b| {
            b.iter(|| black_box(o.gather_nd(&p, &i).unwrap()))
        });
        let mut buf = out.clone();
        g.bench_function(BenchmarkId::new("into", name), |b| {
            b.iter(|| o.gather_nd_into(&p, &i, buf.view_mut()).unwrap())
        });
    }
    g.finish();
}

fn strings(c: &mut Criterion) {
    let p = ArrayD::from_shape_fn(IxDyn(&[10_000]), |ix| {
        format!("value-{}", ix[0]).into_bytes()
    });
    let i = idx(&[100_000], 10_000, false);
    let mut buf = ndgather::gather(&p, &i).unwrap();
    c.bench_function("strings/alloc", |b| {
        b.iter(|| black_box(ndgather::gather(&p, &i).unwrap()))
    });
    c.bench_function("strings/into", |b| {
        b.iter(|| {
            GatherOptions::new()
                .gather_into(&p, &i, buf.view_mut())
                .unwrap()
        })
    });
}

/// The gradient of an embedding lookup: 200,000 rows of 128 f32 scattered (with duplicates)
/// into a 100,000-row table, dense and through unsorted_segment_sum.
fn scatters(c: &mut Criterion) {
    let mut g = c.benchmark_group("scatter");
    g.sample_size(10);
    let (rows, width, table) = (200_000usize, 128usize, 100_000usize);
    let indices = idx(&[rows], table, false);
    let grad = self::table(&[rows, width]);
    g.throughput(Throughput::Bytes((rows * width * 4 * 2) as u64));
    g.bench_function("gather_grad_dense", |b| {
        b.iter(|| {
            black_box(ndgather::grad::gather_grad(&[table, width], &indices, &grad, 0, 0).unwrap())
        })
    });
    g.bench_function("unsorted_segment_sum", |b| {
        b.iter(|| {
            black_box(
                ndgather::scatter::unsorted_segment_sum(
                    &grad,
                    &indices,
                    table,
                    ndgather::BadIndices::Error,
                )
                .unwrap(),
            )
        })
    });
    let nd = indices.clone().insert_axis(ndarray::Axis(1));
    g.bench_function("scatter_nd", |b| {
        b.iter(|| {
            black_box(
                ndgather::scatter::scatter_nd(
                    &nd,
                    &grad,
                    &[table, width],
                    ndgather::BadIndices::Error,
                )
                .unwrap(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, gathers, gather_nds, strings, scatters);
criterion_main!(benches);
