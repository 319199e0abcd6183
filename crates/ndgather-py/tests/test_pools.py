"""Which pool runs a call's parallel work: the importing thread's own, rayon's global pool
for other threads, and a pool of its own in a process made by fork."""
import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import ndgather as ng
from ndgather import _core

RNG = np.random.default_rng(7)
# Sizes that run in parallel, numeric and object arrays alike.
PARAMS = RNG.normal(size=(4_000, 64)).astype(np.float32)
INDICES = RNG.integers(0, 4_000, size=(30_000,))
WORDS = np.array([b"w%d" % k for k in range(1_000)], dtype=object)
WORD_IDS = RNG.integers(0, 1_000, size=(300_000,))


def call_here_and_on_another_thread():
    """Gathers on this thread, then on a new one: for each, whether that thread was one of
    its call's workers and whether every answer was right."""
    seen = {}

    def call(where):
        in_pool = _core._calling_thread_in_pool()
        right = (np.array_equal(ng.gather(PARAMS, INDICES), PARAMS[INDICES])
                 and bool((ng.gather(WORDS, WORD_IDS) == WORDS[WORD_IDS]).all())
                 and np.array_equal(ng.gather_nd(PARAMS, INDICES[:, None] % 4_000),
                                    PARAMS[INDICES]))
        seen[where] = (in_pool, right)

    call("this")
    other = threading.Thread(target=call, args=("other",))
    other.start()
    other.join()
    return seen


def test_the_importing_thread_is_a_worker_of_its_calls_pool_and_others_are_not():
    """The thread that imported ndgather (pytest's main thread) runs its calls in a pool of
    which it is a worker; another thread's calls go to rayon's global pool. Both give the
    right answers."""
    assert call_here_and_on_another_thread() == {"this": (True, True), "other": (False, True)}


def forked_child(depth, timeout_s=60):
    """What a child made by fork reports: `call_here_and_on_another_thread()`'s result, then,
    while depth > 1, its own forked child's report; "hung" if it did not finish within the
    timeout."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue, depth, timeout_s))
    child.start()
    child.join(timeout_s)
    if child.exitcode is None:
        child.kill()
        child.join()
        return "hung"
    return queue.get(timeout=5) if child.exitcode == 0 else f"exit code {child.exitcode}"


def _child(queue, depth, timeout_s):
    report = [call_here_and_on_another_thread()]
    if depth > 1:
        report.append(forked_child(depth - 1, timeout_s / 2))
    queue.put(report)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="this platform has no fork")
def test_a_forked_child_and_grandchild_gather_in_parallel_after_the_parent_did():
    """Once the parent has gathered on its importing thread and on another (so both pools it
    uses have threads), a forked child gathers on both kinds of thread again, and so does
    the child's own forked child. Before each process built its own pool, the child waited
    forever for threads that a fork does not copy."""
    call_here_and_on_another_thread()
    right = {"this": (False, True), "other": (False, True)}
    assert forked_child(depth=2) == [right, [right]]


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="this platform has no fork")
def test_forks_made_while_another_thread_gathers_large_outputs_do_not_hang():
    """Another thread keeps making outputs large enough to be recycled (so it keeps taking
    and giving back the lock on ndgather's kept buffers) while this one forks ten children,
    each of which gathers such outputs too. Each child keeps its buffers apart, so none waits
    on a lock held by a thread that the fork did not copy. (A first version held that lock
    across the fork instead; it deadlocked here in a full run, as Python's other fork hooks
    let a thread that needed the lock take the GIL meanwhile.)"""
    stop = threading.Event()

    def keep_gathering():
        while not stop.is_set():
            ng.gather(PARAMS, INDICES)

    busy = threading.Thread(target=keep_gathering)
    busy.start()
    try:
        reports = [forked_child(depth=1, timeout_s=30) for _ in range(10)]
    finally:
        stop.set()
        busy.join()
    right = {"this": (False, True), "other": (False, True)}
    assert reports == [[right]] * 10


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads are counted in /proc")
def test_small_calls_run_where_they_are_called_and_build_no_second_pool():
    # A small write into a new array runs on the calling thread, with no pool; later calls
    # build the importing thread's own pool, once: never rayon's global one beside it.
    code = """
import os, numpy as np, ndgather as ng
threads = lambda: len(os.listdir("/proc/self/task"))
t, i, u = np.zeros((4, 3), np.float32), np.array([[1], [2]]), np.ones((2, 3), np.float32)
start = threads()
for name in ("update", "add", "min"):
    getattr(ng, "tensor_scatter_nd_" + name)(t, i, u)
ng.scatter_reduce(t, 0, np.array([[0, 1, 2]]), u[:1], "amax")
ng.gather(t, [1, 0])
after_small = threads()
ng.tensor_scatter_nd_add(t, i, u, out=t)
ng.gather(np.zeros((4000, 64), np.float32), np.arange(30000) % 4000)
print(start, after_small, threads())
"""
    env = dict(os.environ, RAYON_NUM_THREADS="8")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    start, after_small, end = map(int, out.stdout.split())
    assert after_small == start, out.stdout
    assert end <= start + 8, out.stdout  # one pool of 8 workers, the caller among them
