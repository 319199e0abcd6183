"""The cost of a tiny call from Python (issue 44): ng.gather on a [4, 2] float32 array and 2
indices against np.take on the same arrays, timeit min of 5 x 20,000 calls, three rounds in
one process; with --before REV, also the Python wrapper of that git revision over the same
extension (its ndgather/__init__.py, imported as a second module).

    python bench/tiny_call.py [--before 21c6ff4]
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile
import timeit

import numpy as np

import ndgather as ng

parser = argparse.ArgumentParser()
parser.add_argument("--before", help="a git revision whose Python wrapper to time too")
args = parser.parse_args()

old = None
if args.before:
    source = subprocess.run(["git", "show", f"{args.before}:crates/ndgather-py/python/ndgather/"
                             "__init__.py"], capture_output=True, text=True, check=True).stdout
    folder = pathlib.Path(tempfile.mkdtemp()) / "ndgather_before"
    folder.mkdir()
    (folder / "__init__.py").write_text(source.replace("from . import _core",
                                                       "from ndgather import _core"))
    sys.path.insert(0, str(folder.parent))
    import ndgather_before as old  # noqa: E402

a = np.arange(8, dtype="f4").reshape(4, 2)
i = np.array([3, 1])
assert (ng.gather(a, i) == np.take(a, i, axis=0)).all()


def best(f):
    return min(timeit.repeat(f, number=20000, repeat=5)) / 20000 * 1e6


for _ in range(3):
    take = best(lambda: np.take(a, i, axis=0))
    now = best(lambda: ng.gather(a, i))
    line = f"ng.gather {now:.3f} us ({now / take:.2f}x)"
    if old is not None:
        then = best(lambda: old.gather(a, i))
        line = f"before {then:.3f} us ({then / take:.2f}x)  after: " + line
    extension = best(lambda: ng._core.gather(a, i, None, 0, "error", None, None))
    print(f"{line}  np.take {take:.3f} us  the extension alone {extension:.3f} us")
