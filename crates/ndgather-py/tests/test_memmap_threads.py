"""Memory maps are read in place; several Python threads gather at once."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import ndgather as ng

CHILD = r"""
import resource, sys
import numpy as np
import ndgather as ng
table = np.load(sys.argv[1], mmap_mode="r")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = ng.gather(table, [0, 7, 123456, table.shape[0] - 1, 42])
assert rows.shape == (5, table.shape[1]) and rows.dtype == table.dtype
assert (rows[3] == 3.0).all() and (rows[0] == 0.0).all()
nd = ng.gather_nd(table, [[table.shape[0] - 1, 5]])
assert nd.tolist() == [3.0]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.parametrize("fortran_order", [False, True], ids=["C-order", "Fortran-order"])
def test_gathering_rows_of_a_2_gib_memmap_does_not_read_the_file(tmp_path, fortran_order):
    rows, width = (2 << 30) // (4 * 256), 256
    path = tmp_path / "table.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f4", "fortran_order": fortran_order, "shape": (rows, width)})
        header = f.tell()
        f.truncate(header + rows * width * 4)  # sparse: reads as zeros, costs no disk
        last_row = np.full(width, 3.0, "<f4").tobytes()
        if fortran_order:  # the last row is the last element of every column
            for c in range(width):
                f.seek(header + ((c + 1) * rows - 1) * 4)
                f.write(last_row[:4])
        else:
            f.seek(header + (rows - 1) * width * 4)
            f.write(last_row)
    grown_kib = int(subprocess.check_output([sys.executable, "-c", CHILD, str(path)]).strip())
    # The gather touches 5 rows (5 KiB); NumPy and the extension load a few MiB of code.
    assert grown_kib < 64 * 1024, f"peak RSS grew by {grown_kib} KiB for a 2 GiB table"


def test_four_threads_at_once_give_the_right_answers():
    rng = np.random.default_rng(5)
    params = rng.normal(size=(50_000, 64)).astype(np.float32)
    jobs = [rng.integers(0, 50_000, size=(20_000,)) for _ in range(4)]
    results = [None] * 4
    errors = []

    def work(k):
        try:
            for _ in range(5):
                results[k] = ng.gather(params, jobs[k])
                if k % 2:
                    ng.gather(params, jobs[k], out=np.empty((20_000, 64), np.float32))
                try:
                    ng.gather(params, [50_000 + k])
                except ng.InvalidArgumentError as e:
                    assert str(e) == f"indices[0] = {50_000 + k} is not in [0, 50000)"
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(4):
        assert np.array_equal(results[k], params[jobs[k]])
