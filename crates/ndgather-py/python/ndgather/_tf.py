"""ndgather's ops as native operations of TensorFlow (issue 55).

A TensorFlow tensor inside ``tf.function`` or a TF1 graph has no memory to read, and an
eager one under ``tf.GradientTape`` needs TensorFlow's own op for its gradient. For both,
the public functions (``ndgather.gather`` and the others) call :func:`run`, which adds the
op ``NdgatherOp`` to TensorFlow's program: a custom op library, compiled from
``_tf_op.cc`` on first use against the installed TensorFlow (``tf.sysconfig``'s flags),
cached, and loaded with ``tf.load_op_library``. Its kernel hands TensorFlow's tensors to the
Rust core through the extension's C ABI (``tf_kernel.rs``), which runs any op of the
registry by name.

- The static shape is the op's own inference (``_core.infer_op``) on the inputs' static
  shapes; the kernel computes the exact one when it runs.
- Gradients are registered with ``tf.RegisterGradient``: the core's gradient of the op
  (``NdgatherGrad``), or ``tf.IndexedSlices`` as ``tf.gather``'s where TensorFlow gives them
  (a gather along axis 0 with no batch dimensions and the ``"error"`` policy).
- An index policy is the op's attribute, so ``bad_indices="clamp"`` runs on TensorFlow's
  CPU, and ``"error"`` raises ``tf.errors.InvalidArgumentError`` with TensorFlow's message.

TensorFlow is imported only by a caller that has it: this module imports it on first use.
Building needs a C++ compiler (``$CXX``, else ``c++``, ``g++`` or ``clang++``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from . import _core, _shards
from ._shards import shards  # noqa: F401 (the staging modules offer it)

_lock = threading.Lock()
_library: Any = None


def wanted(*values: Any) -> bool:
    """Whether any of ``values`` (or of the lists among them) is a TensorFlow tensor or
    variable, which only TensorFlow's own op can read inside a graph or differentiate."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return False
    return _shards.any_of(values, (tf.Tensor, tf.Variable))


def asarray(x: Any) -> Any:
    """``x`` as a TensorFlow tensor (a list or NumPy array beside one)."""
    import tensorflow as tf
    return x if isinstance(x, (tf.Tensor, tf.Variable)) else tf.convert_to_tensor(x)


def dtype(x: Any) -> np.dtype:
    """The NumPy dtype of a tensor's elements (for a fill value made in them)."""
    return np.dtype(x.dtype.as_numpy_dtype)


def flat(x: Any) -> Any:
    """``x`` flattened, row-major."""
    import tensorflow as tf
    return tf.reshape(x, [-1])


def no_out(name: str, out: Any) -> None:
    """Refuses ``out``: a TensorFlow op makes its result."""
    if out is not None:
        raise TypeError(f"{name}: out is not taken for TensorFlow tensors (the op makes its "
                        "result); use the result")


def _text(value: Any) -> str:
    """An attribute as the text the core reads for its kind: integers, numbers, true or
    false, integers separated by commas, names, and a fill element's bytes in hex."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return "bytes:" + bytes(value).hex()
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(str(int(v)) for v in value)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value)


def _cache_dir() -> Path:
    """Where built libraries are kept: ``$NDGATHER_CACHE_DIR``, else ndgather's directory
    under ``$XDG_CACHE_HOME`` (``~/.cache``). It must be the user's own and writable by no one
    else, since a library found there is loaded into the process."""
    base = os.environ.get("NDGATHER_CACHE_DIR")
    if base is None:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(home, "ndgather")
    path = Path(base) / "tf"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    for p in (path, path.parent):
        st = p.stat()
        if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise PermissionError(
                f"ndgather: the cache directory {p} must be yours and writable by no one else "
                "(a library built there is loaded into this process); fix its permissions or "
                "set NDGATHER_CACHE_DIR")
    return path


def _compiler() -> str:
    cxx = os.environ.get("CXX") or next(
        (c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if cxx is None:
        raise RuntimeError(
            "ndgather: its TensorFlow op is compiled on first use, and no C++ compiler was "
            "found (c++, g++ or clang++ on PATH); install one, or set CXX")
    return cxx


def build() -> str:
    """The path of the op library for the installed TensorFlow and this extension: built on
    first use, then taken from the cache (the key covers the source, the extension, the
    compiler and TensorFlow's version and flags)."""
    try:
        import tensorflow as tf
    except ImportError as e:
        raise ImportError("ndgather: its TensorFlow op needs TensorFlow "
                          "(pip install tensorflow)") from e
    cxx = _compiler()
    source = Path(__file__).with_name("_tf_op.cc")
    core = Path(_core.__file__).resolve()
    _core.tf_kernels()  # this build of the extension has the kernels' C ABI
    flags = [*tf.sysconfig.get_compile_flags(), *tf.sysconfig.get_link_flags()]
    info = core.stat()
    key = hashlib.sha256("\0".join(
        [source.read_text(), str(core), str(info.st_size), str(info.st_mtime_ns),
         tf.__version__, cxx, *flags]).encode()).hexdigest()[:20]
    target = _cache_dir() / f"ndgather_tf_{key}.so"
    if target.exists():
        return str(target)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    command = [cxx, "-shared", "-fPIC", "-O2", "-w", str(source), "-o", str(partial), *flags,
               str(core), f"-Wl,-rpath,{core.parent}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        raise RuntimeError(f"ndgather: its TensorFlow op is compiled on first use, and the "
                           f"compiler {cxx!r} could not be run ({e}); install one, or set "
                           "CXX") from e
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise RuntimeError("ndgather: compiling its TensorFlow op failed:\n  "
                           + " ".join(command) + "\n" + done.stderr[-4000:])
    os.replace(partial, target)
    return str(target)


def library() -> Any:
    """The loaded op library, built and its gradients registered once per process."""
    global _library
    with _lock:
        if _library is None:
            import tensorflow as tf
            lib = tf.load_op_library(build())
            tf.RegisterGradient("NdgatherOp")(_gradient)
            _library = lib
    return _library


def _static_shape(t: Any) -> Optional[list]:
    shape = t.shape
    return None if shape.rank is None else [d for d in shape.as_list()]


def run(name: str, inputs: Sequence[Any], attrs: Optional[dict] = None) -> Any:
    """Runs the registered op ``name`` as TensorFlow's op: ``inputs`` in the order of the op's
    signature (``None`` for one left out, :func:`shards` for a list input such as an
    embedding table's shards), ``attrs`` its attributes (``None`` values take the op's defaults)."""
    import tensorflow as tf
    lib = library()
    groups = _shards.groups(inputs)
    arity = [len(g) for g in groups]
    given = [asarray(a) for g in groups for a in g]
    attrs = {k: v for k, v in (attrs or {}).items() if v is not None}
    facts: list = []
    at = 0
    for n in arity:
        facts.append(None if n == 0 else (given[at].dtype.name, _static_shape(given[at])))
        at += n
    out_dtype, out_shape = _core.infer_op(name, facts, attrs)
    out_dtype = tf.as_dtype(out_dtype) if out_dtype is not None else given[0].dtype
    return lib.ndgather_op(
        args=given, Tout=out_dtype, op=name, arity=arity,
        attr_names=list(attrs), attr_values=[_text(v) for v in attrs.values()],
        out_shape=tf.TensorShape(out_shape))


@functools.lru_cache(maxsize=None)
def _grad_dtypes() -> frozenset:
    """The names of the dtypes with a gradient in the core (the dtype table's grad role)."""
    return frozenset(_core.grad_dtypes())


def _gather_slices(op: Any, attrs: dict, upstream: Any) -> Optional[Any]:
    """``tf.gather``'s own gradient where TensorFlow gives ``IndexedSlices``: along axis 0,
    with no batch dimensions and bad indices as errors (so every index is a row)."""
    import tensorflow as tf
    if attrs.get("batch_dims", "0") != "0" or attrs.get("axis", "0") != "0" \
            or attrs.get("bad_indices", "error") != "error":
        return None
    params, indices = op.inputs[0], op.inputs[1]
    params_shape = tf.shape(params, out_type=tf.int64)
    size = tf.expand_dims(tf.size(indices, out_type=tf.int64), 0)
    values = tf.reshape(upstream, tf.concat([size, params_shape[1:]], 0))
    return tf.IndexedSlices(values, tf.reshape(indices, size), params_shape)


def _gradient(op: Any, upstream: Any) -> list:
    """``NdgatherOp``'s gradient: one per input, ``None`` for those without one (indices)."""
    import tensorflow as tf
    name = op.get_attr("op").decode()
    names = [n.decode() for n in op.get_attr("attr_names")]
    values = [v.decode() for v in op.get_attr("attr_values")]
    if not _core.op_has_grad(name):
        raise LookupError(f"No gradient defined for operation '{op.name}' "
                          f"(op type: NdgatherOp, ndgather op: {name})")
    args = list(op.inputs)
    if name == "gather":
        slices = _gather_slices(op, dict(zip(names, values)), upstream)
        if slices is not None:
            return [slices] + [None] * (len(args) - 1)
    upstream = tf.convert_to_tensor(upstream)
    wrt = [k for k, a in enumerate(args) if a.dtype.name in _grad_dtypes()]
    if not wrt:
        return [None] * len(args)
    grads = library().ndgather_grad(
        args=[*args, op.outputs[0], tf.cast(upstream, op.outputs[0].dtype)],
        Tgrads=[args[k].dtype for k in wrt], op=name, arity=op.get_attr("arity"),
        attr_names=names, attr_values=values, wrt=wrt)
    by_input = dict(zip(wrt, grads))
    return [by_input.get(k) for k in range(len(args))]
