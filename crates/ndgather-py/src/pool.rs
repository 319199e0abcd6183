//! Where a call's parallel work runs.
//!
//! - Calls from the thread that imported the package (Python's main thread, as a rule) run in
//!   a rayon pool of which that thread is one worker, as the CLI's main thread is: the call
//!   splits its work on the thread that makes it instead of handing it to a pool and sleeping
//!   until it is done (BENCHMARKS.md, "Measurements behind the code").
//! - Calls from any other thread (a Dask worker's, say) use rayon's global pool, all of whose
//!   workers stay theirs.
//! - In a process made by `os.fork` (`multiprocessing`'s `"fork"` method) every call runs in
//!   a pool built in that process. A pool built before the fork has no threads in the child
//!   (`fork` copies only the thread that calls it), and a call handed to it would wait for
//!   them forever. OpenBLAS rebuilds its threads after a fork for the same reason. The core
//!   keeps its given-back buffers apart in the child too ([`ndgather::memory::after_fork_in_child`]).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::ThreadId;

/// The thread that imported the package.
static IMPORTER: OnceLock<ThreadId> = OnceLock::new();
/// The importer's pool, built at its first call; `None` if it could not be (the importer
/// already a worker of another pool).
static IMPORTER_POOL: OnceLock<Option<ThreadPool>> = OnceLock::new();

/// How many forks lie between this process and the one that imported the package: copied by
/// each fork and raised by one in the child.
static FORK_DEPTH: AtomicUsize = AtomicUsize::new(0);
/// Forks deeper than this build a pool for each call.
const DEEPEST_KEPT_POOL: usize = 16;
/// A forked process's pool, in the slot of its depth (depth 1 in slot 0), built at its first
/// call. Every ancestor of a process is shallower, so none has touched the slot: the fork
/// copied it unset, never half built.
static FORKED_POOLS: [OnceLock<Option<ThreadPool>>; DEEPEST_KEPT_POOL] =
    [const { OnceLock::new() }; DEEPEST_KEPT_POOL];

/// Records the calling thread as the importer, and has Python tell a forked child
/// (`os.register_at_fork`, where the platform forks). Called at the module's initialisation.
pub(crate) fn set_up(m: &Bound<'_, PyModule>) -> PyResult<()> {
    IMPORTER.get_or_init(|| std::thread::current().id());
    let os = m.py().import("os")?;
    if os.hasattr("register_at_fork")? {
        let kwargs = PyDict::new(m.py());
        kwargs.set_item("after_in_child", wrap_pyfunction!(after_fork_in_child, m)?)?;
        os.call_method("register_at_fork", (), Some(&kwargs))?;
    }
    Ok(())
}

/// Runs in a forked child before anything else: from now on its calls use its own pool, and
/// the core its own kept buffers.
#[pyfunction]
fn after_fork_in_child() {
    ndgather::memory::after_fork_in_child();
    FORK_DEPTH.fetch_add(1, Ordering::Relaxed);
}

/// Runs `f` with the GIL released, as [`in_callers_pool`] does.
pub(crate) fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    py.detach(|| in_callers_pool(f))
}

/// Runs `f` in the pool for this thread's calls (the module's documentation says which).
pub(crate) fn in_callers_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let build = |builder: ThreadPoolBuilder| builder.build().ok();
    // Each pool's size is rayon's default (RAYON_NUM_THREADS, else the CPUs). Built pools
    // are never dropped: the importer belongs to its pool for good.
    let pool = match FORK_DEPTH.load(Ordering::Relaxed) {
        0 if IMPORTER.get() == Some(&std::thread::current().id()) => IMPORTER_POOL
            .get_or_init(|| build(ThreadPoolBuilder::new().use_current_thread()))
            .as_ref(),
        0 => return f(),
        depth => match FORKED_POOLS.get(depth - 1) {
            Some(slot) => slot
                .get_or_init(|| build(ThreadPoolBuilder::new()))
                .as_ref(),
            None => return run_in(build(ThreadPoolBuilder::new()).as_ref(), f),
        },
    };
    run_in(pool, f)
}

/// Runs `f` in `pool`, or as is if no pool could be built (no thread to be had): its parallel
/// work then goes wherever this thread's would (rayon's global pool, or, on a forked child's
/// thread that was a worker of its parent's pool, that thread alone).
fn run_in<T: Send>(pool: Option<&ThreadPool>, f: impl FnOnce() -> T + Send) -> T {
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// Whether a call from this thread runs with this thread as one of its pool's workers.
#[pyfunction]
pub(crate) fn _calling_thread_in_pool(py: Python<'_>) -> bool {
    let caller = std::thread::current().id();
    detached(py, || {
        rayon::current_thread_index().is_some() && std::thread::current().id() == caller
    })
}
