"""ndgather's ops inside JAX's transformations (issue 55): the cases of ``jax_ops_cases.py``,
run by pytest in a child process, since a process with JAX's threads should not fork and
other tests fork."""

import pathlib
import subprocess
import sys

import pytest


def test_ops_inside_jax_transformations():
    pytest.importorskip("jax")
    cases = pathlib.Path(__file__).with_name("jax_ops_cases.py")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(cases)], capture_output=True, text=True, timeout=600)
    summary = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    # The child's totals, so that a reader of the log sees how many cases ran.
    print(f"jax_ops_cases.py: {summary[0]}")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in summary[0] and "failed" not in summary[0], summary
