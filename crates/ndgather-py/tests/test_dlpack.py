"""Arrays of other libraries through DLPack: read in place, results in the caller's namespace.

JAX is pinned in requirements-dev.txt, so its tests always run; PyTorch's run where torch is
installed and are skipped, saying so, where it is not. `Lent` stands for any other library:
an object that only speaks DLPack, over a NumPy array of any strides.
"""

import subprocess
import sys

import numpy as np
import pytest

import ndgather as ng


class Lent:
    """An array of some other library: nothing but the DLPack protocol."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


def test_any_dlpack_array_is_read_in_place_with_its_strides():
    table = np.arange(60, dtype=np.float32).reshape(10, 6)[::2, 1::2]  # not contiguous
    ids = np.array([4, 0, 4, 2], dtype=np.int64)[::-1]
    got = ng.gather(Lent(table), Lent(ids))
    np.testing.assert_array_equal(got, np.take(table, ids, axis=0))
    assert type(got) is np.ndarray  # a library ndgather does not know gets NumPy back
    np.testing.assert_array_equal(ng.take_along_axis(Lent(table), Lent(np.zeros((5, 1), int))),
                                  table[:, :1])


def test_out_is_written_where_it_lies_and_returned_as_given():
    backing = np.zeros((6, 3), dtype=np.float64)
    out = Lent(backing[::2])  # strided: rows 0, 2 and 4
    got = ng.gather(np.arange(12.0).reshape(4, 3), [3, 0, 1], out=out)
    assert got is out
    np.testing.assert_array_equal(backing[::2], [[9, 10, 11], [0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(backing[1::2], 0)


def test_a_read_only_dlpack_tensor_is_never_written():
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ng.gather(np.arange(3.0), [2, 1], out=Lent(frozen))
    np.testing.assert_array_equal(frozen, 0)


@pytest.mark.parametrize("device, name", [((2, 1), "CUDA device 1"), ((10, 0), "ROCm device 0"),
                                          ((8, 0), "Metal device 0")])
def test_a_device_array_is_a_type_error_that_says_what_to_do(device, name):
    lent = Lent(np.zeros(3), device)
    for call in (lambda: ng.gather(lent, [0]), lambda: ng.gather(np.zeros(3), lent),
                 lambda: ng.gather(np.zeros(3), [0], out=Lent(np.zeros(1), device))):
        with pytest.raises(TypeError, match=f"{name}: copy it to the CPU first.*\\.cpu\\(\\)"):
            call()


#: JAX's checks run in a child process: a process with JAX's threads should not fork, and
#: other tests fork.
JAX_CHECKS = """
import jax, jax.numpy as jnp, numpy as np, ndgather as ng
table = jnp.arange(24.0, dtype=jnp.float32).reshape(6, 4)
ids = jnp.array([5, 0, 5])
got = ng.gather(table, ids)
assert isinstance(got, jax.Array), type(got)
np.testing.assert_array_equal(np.asarray(got), np.asarray(table)[[5, 0, 5]])
assert isinstance(ng.take_along_axis(table, jnp.zeros((6, 1), jnp.int32), axis=1), jax.Array)
assert isinstance(ng.take(table, ids, axis=0), jax.Array)
assert isinstance(ng.embedding_lookup([table[:3], table[3:]], ids), jax.Array)
assert isinstance(ng.gather_nd(table, jnp.array([[1, 2]])), jax.Array)
# NumPy params with JAX indices give NumPy: the namespace is params'.
assert type(ng.gather(np.asarray(table), ids)) is np.ndarray
try:
    ng.gather(table, ids, out=jnp.zeros((3, 4), jnp.float32))
    raise AssertionError("a JAX out was accepted")
except TypeError as e:
    assert "JAX arrays are immutable" in str(e), e
# "wrap" is JAX's mode="wrap" too.
x, idx = jnp.arange(5) * 10, jnp.array([-11, -6, -5, -1, 0, 4, 5, 11, 38])
np.testing.assert_array_equal(np.asarray(ng.take(x, idx, bad_indices="wrap")),
                              np.asarray(jnp.take(x, idx, mode="wrap")))
print("ok")
"""


def test_jax_arrays_in_and_out():
    pytest.importorskip("jax")
    done = subprocess.run([sys.executable, "-c", JAX_CHECKS], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: its DLPack tests "
                                "were skipped")
    table = torch.arange(24, dtype=torch.float32).reshape(6, 4)
    got = ng.gather(table, torch.tensor([5, 0]))
    assert isinstance(got, torch.Tensor)
    assert torch.equal(got, table[[5, 0]])
    t = table.t()  # a transposed view: strides (1, 4)
    assert torch.equal(ng.gather(t, torch.tensor([3]), axis=1), t[:, [3]])
    out = torch.zeros(2, 4)
    assert ng.gather(table, [1, 2], out=out) is out
    assert torch.equal(out, table[1:3])
