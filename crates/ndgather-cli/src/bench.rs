//! `ndgather bench SUITE.json`: times each case of the shared benchmark suite in-process, in
//! two modes (`alloc`: a fresh output per call; `into`: the caller's buffer reused), beside
//! this machine's memcpy bandwidth measured in the same run.
//!
//! Numeric inputs of 4 MiB and more are on 2 MiB pages ([`ndgather::memory::huge_page_vec`]), as
//! the peers' NumPy arrays are.
//!
//! Strings are timed as each front end holds them: `alloc` gathers a dtype-erased
//! [`Tensor`] (a [`ndgather::Strings`]: one byte buffer and spans), `into` an `ndarray` array of
//! `Vec<u8>` into a reused array (each element's allocation reused by `clone_from`).

use crate::error::CliError;
use ndarray::{ArrayD, IxDyn};
use ndgather::registry::Input;
use ndgather::{
    Element, GatherNdOptions, GatherOptions, IndexType, Op, OpDef, Out, TakeAlongAxisOptions,
    Tensor, TensorElement, TensorViewMut,
};
use serde_json::{json, Value};
use std::time::Instant;

/// Options of one bench run.
pub struct BenchArgs {
    /// Use the cases' quick sizes.
    pub quick: bool,
    /// Only these cases.
    pub cases: Option<Vec<String>>,
    /// Samples per case and mode.
    pub runs: usize,
}

/// A small, fast generator (xorshift64*); the suite asks only for the distribution.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn bad(what: &str) -> CliError {
    CliError::Internal(format!("suite: {what}"))
}

fn dims(v: &Value, what: &str) -> Result<Vec<usize>, CliError> {
    v.as_array()
        .ok_or_else(|| bad(what))?
        .iter()
        .map(|d| d.as_u64().map(|d| d as usize).ok_or_else(|| bad(what)))
        .collect()
}

/// One case's inputs and how to call it.
struct Case {
    name: String,
    op: String,
    axis: Option<i64>,
    batch_dims: i64,
    params_shape: Vec<usize>,
    indices_shape: Vec<usize>,
    index_high: Vec<u64>,
    sorted: bool,
    seed: u64,
    params: Value,
    index_dtype: String,
}

fn parse_case(c: &Value, quick: bool) -> Result<Case, CliError> {
    let sizes = &c[if quick { "quick" } else { "full" }];
    let high = &sizes["index_high"];
    let index_high = if let Some(h) = high.as_u64() {
        vec![h]
    } else {
        dims(high, "index_high")?
            .into_iter()
            .map(|h| h as u64)
            .collect()
    };
    Ok(Case {
        name: c["name"]
            .as_str()
            .ok_or_else(|| bad("case without name"))?
            .to_string(),
        op: c["op"].as_str().unwrap_or("gather").to_string(),
        axis: c["axis"].as_i64(),
        batch_dims: c["batch_dims"].as_i64().unwrap_or(0),
        params_shape: dims(&sizes["params_shape"], "params_shape")?,
        indices_shape: dims(&sizes["indices_shape"], "indices_shape")?,
        index_high,
        sorted: c["indices"]["sorted"].as_bool().unwrap_or(false),
        seed: c["seed"].as_u64().unwrap_or(1),
        params: c["params"].clone(),
        index_dtype: c["indices"]["dtype"]
            .as_str()
            .unwrap_or("int32")
            .to_string(),
    })
}

/// CPU seconds (all CPUs busy, and this process) from /proc; `None` where there is no /proc.
fn cpu_seconds() -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let v: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|x| x.parse().ok())
        .collect();
    let busy = v.first()? + v.get(1)? + v.get(2)? + v.get(5)? + v.get(6)? + v.get(7)?;
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = own.rsplit(')').next()?.split_whitespace().collect();
    let mine = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some((busy / 100.0, mine / 100.0))
}

/// Waits (up to `max_s`) until other processes use under a quarter of a core, as peers.py
/// does: the machine may be shared, and a busy neighbour skews multi-threaded timings.
fn wait_quiet(max_s: f64) {
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < max_s {
        let Some((busy0, own0)) = cpu_seconds() else {
            return;
        };
        let t = Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let Some((busy1, own1)) = cpu_seconds() else {
            return;
        };
        let others = ((busy1 - busy0) - (own1 - own0)) / t.elapsed().as_secs_f64();
        if others < 0.25 {
            return;
        }
    }
}

/// Untimed calls before the samples, for at least this long, as peers.py's blocks begin: after
/// a sleep (the quiet wait's), the pool's workers share a CPU with the caller for some tens of
/// ms, until the scheduler moves them apart (bench/LOG.md, "Block warm-up").
const WARM_UP: std::time::Duration = std::time::Duration::from_millis(100);

/// Median seconds per call of `f`, over `runs` samples of at least ~20 ms each.
fn time(runs: usize, mut f: impl FnMut()) -> f64 {
    let warm = Instant::now();
    f();
    while warm.elapsed() < WARM_UP {
        f();
    }
    let start = Instant::now();
    f();
    let once = start.elapsed().as_secs_f64().max(1e-9);
    let reps = ((0.02 / once).ceil() as usize).clamp(1, 1_000_000);
    let mut samples: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            t.elapsed().as_secs_f64() / reps as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// memcpy bandwidth (bytes read + written per second), the better of 1 and all threads.
pub fn memcpy_gbps(runs: usize) -> f64 {
    use rayon::prelude::*;
    let n = 256 << 20;
    let src = vec![1u8; n];
    let mut dst = vec![0u8; n];
    let one = time(runs, || dst.copy_from_slice(&src));
    let all = time(runs, || {
        dst.par_chunks_mut(n / 16)
            .zip(src.par_chunks(n / 16))
            .for_each(|(d, s)| d.copy_from_slice(s))
    });
    2.0 * n as f64 / one.min(all) / 1e9
}

fn indices<I: IndexType + TryFrom<u64>>(case: &Case, rng: &mut Rng) -> Result<ArrayD<I>, CliError> {
    let count: usize = case.indices_shape.iter().product();
    let depth = case.index_high.len();
    let mut flat: Vec<u64> = (0..count)
        .map(|k| rng.below(case.index_high[k % depth]))
        .collect();
    if case.sorted {
        flat.sort_unstable();
    }
    // On 2 MiB pages where large, as NumPy's arrays are (the peers' inputs).
    let mut values = ndgather::memory::huge_page_vec(count)?;
    for v in flat {
        values.push(I::try_from(v).map_err(|_| bad("index does not fit its dtype"))?);
    }
    ArrayD::from_shape_vec(IxDyn(&case.indices_shape), values).map_err(|e| bad(&e.to_string()))
}

/// The op of a case with its options.
fn op_of(case: &Case) -> Op {
    match case.op.as_str() {
        "gather_nd" => Op::GatherNd(GatherNdOptions::new().batch_dims(case.batch_dims)),
        "take_along_axis" => Op::TakeAlongAxis(TakeAlongAxisOptions::new(case.axis.unwrap_or(0))),
        _ => {
            let o = GatherOptions::new().batch_dims(case.batch_dims);
            Op::Gather(case.axis.map_or(o, |a| o.axis(a)))
        }
    }
}

/// A run into a caller's typed array: through the one door, `OpDef::run`, for the fixed-width dtypes, and
/// through the typed API for strings, whose tensors own their bytes (so have no caller's
/// buffer in the dtype-erased API).
trait RunInto: TensorElement + Sized {
    fn run_into<I: IndexType>(
        op: Op,
        params: (&ArrayD<Self>, &Tensor),
        indices: (&ArrayD<I>, &Tensor),
        out: &mut ArrayD<Self>,
    ) -> ndgather::Result<()>;
}

macro_rules! run_into_erased {
    ($($t:ty),*) => {$(
        impl RunInto for $t {
            fn run_into<I: IndexType>(
                op: Op,
                (_, p): (&ArrayD<Self>, &Tensor),
                (_, i): (&ArrayD<I>, &Tensor),
                out: &mut ArrayD<Self>,
            ) -> ndgather::Result<()> {
                let target = TensorViewMut::from(out.view_mut());
                let inputs = [Input::from(p.view()), Input::from(i.view())];
                OpDef::run(&op, &inputs, Out::Into(target)).map(drop)
            }
        }
    )*};
}
run_into_erased!(f32, f64);

impl RunInto for Vec<u8> {
    fn run_into<I: IndexType>(
        op: Op,
        (p, _): (&ArrayD<Self>, &Tensor),
        (i, _): (&ArrayD<I>, &Tensor),
        out: &mut ArrayD<Self>,
    ) -> ndgather::Result<()> {
        match op {
            Op::Gather(o) => o.gather_into(p, i, out.view_mut()),
            Op::GatherNd(o) => o.gather_nd_into(p, i, out.view_mut()),
            Op::TakeAlongAxis(o) => o.take_along_axis_into(p, i, out.view_mut()),
            _ => Err(ndgather::Error::Internal("an op the bench does not know")),
        }
    }
}

/// One timed mode of one case.
pub struct Timing {
    /// `alloc` or `into`.
    pub mode: &'static str,
    /// Median seconds per call.
    pub median_s: f64,
    /// Bytes moved per call, as the suite counts them.
    pub bytes_moved: usize,
}

/// Runs one case in both modes.
fn run_typed<T: RunInto, I: IndexType + TryFrom<u64>>(
    case: &Case,
    params: &ArrayD<T>,
    rng: &mut Rng,
    runs: usize,
    payload: impl Fn(&ArrayD<T>) -> usize,
) -> Result<Vec<Timing>, CliError>
where
    ArrayD<T>: Into<Tensor>,
    ArrayD<I>: Into<Tensor>,
{
    let indices = indices::<I>(case, rng)?;
    let op = op_of(case);
    let (p, i): (Tensor, Tensor) = (params.clone().into(), indices.clone().into());
    let fresh = || -> ndgather::Result<Tensor> {
        let inputs = [Input::from(p.view()), Input::from(i.view())];
        OpDef::run(&op, &inputs, Out::New)?
            .ok_or(ndgather::Error::Internal("a new output"))?
            .into_dense()
    };
    let mut out = fresh()?.into_array::<T>()?;
    let bytes_moved = 2 * payload(&out) + indices.len() * std::mem::size_of::<I>();
    let alloc_s = time(runs, || drop(std::hint::black_box(fresh())));
    let into_s = time(runs, || {
        let _ = std::hint::black_box(T::run_into(op, (params, &p), (&indices, &i), &mut out));
    });
    Ok(vec![
        Timing {
            mode: "alloc",
            median_s: alloc_s,
            bytes_moved,
        },
        Timing {
            mode: "into",
            median_s: into_s,
            bytes_moved,
        },
    ])
}

fn uniform_params<T: Element>(
    case: &Case,
    rng: &mut Rng,
    make: impl Fn(f64) -> T,
) -> Result<ArrayD<T>, CliError> {
    let n: usize = case.params_shape.iter().product();
    // On 2 MiB pages where large, as NumPy's arrays are (the peers' inputs).
    let mut values = ndgather::memory::huge_page_vec(n)?;
    values.extend((0..n).map(|_| make(rng.unit())));
    ArrayD::from_shape_vec(IxDyn(&case.params_shape), values).map_err(|e| bad(&e.to_string()))
}

fn with_indices<T: RunInto>(
    case: &Case,
    params: &ArrayD<T>,
    rng: &mut Rng,
    runs: usize,
    payload: impl Fn(&ArrayD<T>) -> usize,
) -> Result<Vec<Timing>, CliError>
where
    ArrayD<T>: Into<Tensor>,
{
    match case.index_dtype.as_str() {
        "int32" => run_typed::<T, i32>(case, params, rng, runs, payload),
        "int64" => run_typed::<T, i64>(case, params, rng, runs, payload),
        other => Err(bad(&format!("index dtype {other}"))),
    }
}

fn run_case(case: &Case, runs: usize) -> Result<Vec<Timing>, CliError> {
    let mut rng = Rng(case.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    match case.params["dtype"].as_str().unwrap_or("") {
        "float32" => {
            let p = uniform_params(case, &mut rng, |u| u as f32)?;
            with_indices(case, &p, &mut rng, runs, |o| o.len() * 4)
        }
        "float64" => {
            let p = uniform_params(case, &mut rng, |u| u)?;
            with_indices(case, &p, &mut rng, runs, |o| o.len() * 8)
        }
        "string" => {
            let lo = case.params["min_len"].as_u64().unwrap_or(1);
            let hi = case.params["max_len"].as_u64().unwrap_or(lo).max(lo);
            let alphabet: Vec<u8> = case.params["alphabet"]
                .as_str()
                .unwrap_or("ab")
                .bytes()
                .collect();
            let n: usize = case.params_shape.iter().product();
            let data = (0..n)
                .map(|_| {
                    let len = lo + rng.below(hi - lo + 1);
                    (0..len)
                        .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                        .collect::<Vec<u8>>()
                })
                .collect();
            let p = ArrayD::from_shape_vec(IxDyn(&case.params_shape), data)
                .map_err(|e| bad(&e.to_string()))?;
            with_indices(case, &p, &mut rng, runs, |o| o.iter().map(Vec::len).sum())
        }
        other => Err(bad(&format!("params dtype {other}"))),
    }
}

/// Runs the suite and prints a table; returns the JSON report.
pub fn run(
    suite_path: &std::path::Path,
    args: &BenchArgs,
    out: &mut impl std::io::Write,
) -> Result<Value, CliError> {
    let text =
        std::fs::read_to_string(suite_path).map_err(|e| CliError::io(suite_path.display(), e))?;
    let suite: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
    let cases = suite["cases"].as_array().ok_or_else(|| bad("no cases"))?;
    let memcpy = memcpy_gbps(args.runs.min(5));
    let line = |out: &mut dyn std::io::Write, s: String| {
        writeln!(out, "{s}").map_err(|e| CliError::io("<stdout>", e))
    };
    // Whether the calling thread is one of rayon's workers (the CLI's `main` makes it one),
    // so that each call splits its work where it runs instead of handing it to the pool.
    let in_pool = rayon::current_thread_index().is_some();
    let threads = rayon::current_num_threads();
    line(
        out,
        format!(
            "memcpy {memcpy:.1} GB/s (read + write), {threads} threads ({})",
            if in_pool {
                "the calling thread one of them"
            } else {
                "the calling thread outside the pool"
            }
        ),
    )?;
    line(
        out,
        format!(
            "{:<11} {:<6} {:>12} {:>9} {:>8}",
            "case", "mode", "median", "GB/s", "memcpy%"
        ),
    )?;
    let mut report = Vec::new();
    for c in cases {
        let case = parse_case(c, args.quick)?;
        if args
            .cases
            .as_ref()
            .is_some_and(|names| !names.contains(&case.name))
        {
            continue;
        }
        wait_quiet(30.0);
        for t in run_case(&case, args.runs)? {
            let gbps = t.bytes_moved as f64 / t.median_s / 1e9;
            let shown = if t.median_s < 1e-3 {
                format!("{:.2} us", t.median_s * 1e6)
            } else {
                format!("{:.2} ms", t.median_s * 1e3)
            };
            line(
                out,
                format!(
                    "{:<11} {:<6} {:>12} {:>9.2} {:>7.0}%",
                    case.name,
                    t.mode,
                    shown,
                    gbps,
                    100.0 * gbps / memcpy
                ),
            )?;
            report.push(
                json!({"name": case.name, "mode": t.mode, "median_s": t.median_s, "gbps": gbps,
                               "bytes_moved": t.bytes_moved, "memcpy_share": gbps / memcpy}),
            );
        }
    }
    Ok(
        json!({"memcpy_gbps": memcpy, "threads": threads, "calling_thread_in_pool": in_pool, "quick": args.quick, "cases": report}),
    )
}
