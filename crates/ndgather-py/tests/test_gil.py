"""Long work runs without the GIL: another Python thread runs meanwhile. The door keeps the
GIL only for calls whose bytes are few (at most 16 KiB with their output), and an op whose
work few bytes do not bound releases it whatever its size."""

from __future__ import annotations

import threading
import time
from typing import Callable

import numpy as np
import pytest

import ndgather as ng
from ndgather import _core


def longest_wait(call: Callable[[], object]) -> tuple[float, float]:
    """The longest time another Python thread, going round a loop, waited for the GIL
    while ``call`` ran, and how long ``call`` took (seconds)."""
    longest, stop, started = [0.0], threading.Event(), threading.Event()

    def spin() -> None:
        last = time.perf_counter()
        started.set()
        while not stop.is_set():
            now = time.perf_counter()
            longest[0] = max(longest[0], now - last)
            last = now

    thread = threading.Thread(target=spin)
    thread.start()
    started.wait()
    begin = time.perf_counter()
    call()
    took = time.perf_counter() - begin
    stop.set()
    thread.join()
    return longest[0], took


def broadcast_put() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """4 KiB of array and 8 KB of indices that broadcast to 33 million writes (NumPy's rule:
    indices broadcast against the array's other axes)."""
    return (np.zeros((1, 4096, 1), np.uint8), np.zeros((1, 1, 8000), np.int8),
            np.ones((1, 1, 1), np.uint8))


@pytest.mark.parametrize("form", ["new", "out", "in place"])
def test_a_put_along_axis_of_few_bytes_and_much_work_lets_threads_run(form):
    arr, idx, values = broadcast_put()
    attrs = {"axis": 0}
    if form == "new":
        call = lambda: _core.run_op("put_along_axis", [arr, idx, values], attrs)  # noqa: E731
    elif form == "out":
        out = np.empty_like(arr)
        call = lambda: _core.run_op("put_along_axis", [arr, idx, values], attrs, out)  # noqa: E731
    else:
        call = lambda: ng.put_along_axis(arr, idx, values, axis=0)  # noqa: E731
    waited, took = longest_wait(call)
    # Held, the GIL would keep the other thread waiting the whole call (0.3 s or more).
    assert took > 0.1 and waited < took / 4, (waited, took)
