//! Where a call's parallel work runs. Calls from the thread that imported the package
//! (Python's main thread, as a rule) run in a rayon pool of which that thread is one worker,
//! as the CLI's main thread is: the call splits its work on the thread that makes it instead
//! of handing it to a pool and sleeping until it is done (BENCHMARKS.md, the changes table's
//! row for the CLI: 0.76-0.95x on the suite's quick cases). Calls from any other thread (a
//! Dask worker's, say) use rayon's global pool, all of whose workers stay theirs.

use pyo3::Python;
use std::sync::OnceLock;
use std::thread::ThreadId;

/// The thread that imported the package.
static IMPORTER: OnceLock<ThreadId> = OnceLock::new();
/// The importer's pool, built at its first call; `None` if it could not be (the importer
/// already a worker of another pool).
static IMPORTER_POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();

/// Records the calling thread as the importer (at the module's initialisation).
pub(crate) fn remember_importer() {
    IMPORTER.get_or_init(|| std::thread::current().id());
}

/// Runs `f` with the GIL released, as [`in_importers_pool`] does.
pub(crate) fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    py.detach(|| in_importers_pool(f))
}

/// Runs `f`: on the importer, inside its pool (built at its first call); elsewhere, as is.
pub(crate) fn in_importers_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if IMPORTER.get() != Some(&std::thread::current().id()) {
        return f();
    }
    let pool = IMPORTER_POOL.get_or_init(|| {
        // The pool's size is rayon's default (RAYON_NUM_THREADS, else the CPUs), this thread
        // one of them. Never dropped: the importer belongs to it for good.
        rayon::ThreadPoolBuilder::new()
            .use_current_thread()
            .build()
            .ok()
    });
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// Whether a call from this thread runs with this thread as one of its pool's workers.
#[pyo3::pyfunction]
pub(crate) fn _calling_thread_in_pool(py: Python<'_>) -> bool {
    detached(py, || rayon::current_thread_index().is_some())
}
