"""ndgather's ops inside JAX's transformations (issue 55): the cases of ``jax_ops_cases.py``,
and the table of ``jax_table_cases.py`` (with float64, ``JAX_ENABLE_X64=1``), each run by
pytest in a child process, since a process with JAX's threads should not fork and other
tests fork."""

import os
import pathlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize("cases, env", [("jax_ops_cases.py", {}),
                                        ("jax_table_cases.py", {"JAX_ENABLE_X64": "1"})])
def test_ops_inside_jax_transformations(cases, env):
    pytest.importorskip("jax")
    path = pathlib.Path(__file__).with_name(cases)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(path)], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **env))
    summary = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    # The child's totals, so that a reader of the log sees how many cases ran.
    print(f"{cases}: {summary[0]}")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in summary[0] and "failed" not in summary[0], summary
