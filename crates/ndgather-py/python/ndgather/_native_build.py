"""The op libraries ndgather compiles on first use against an installed framework, and
links to its extension: TensorFlow's (``_tf_op.cc``) and PyTorch's (``_torch_op.cc``), both
of which include the extension's C ABI (``_kernel_abi.h``).
Each is built once per framework version, extension and compiler, kept in a cache of the
user's own, and loaded only from a file of theirs that no one else may write.

Building needs a C++ compiler (``$CXX``, else ``c++``, ``g++`` or ``clang++``).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from . import _core


def cache_dir(kind: str) -> Path:
    """Where built libraries of ``kind`` (``tf``, ``torch``) are kept:
    ``$NDGATHER_CACHE_DIR``, else ndgather's directory under ``$XDG_CACHE_HOME``
    (``~/.cache``); the directories made are the user's alone. The directory and every one
    above it must be the user's or root's, and writable by no one else but a sticky one's
    owners (``/tmp``), since a library found there is loaded into the process."""
    base = os.environ.get("NDGATHER_CACHE_DIR")
    if base is None:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(home, "ndgather")
    path = Path(os.path.abspath(base)) / kind
    missing = [p for p in [path, *path.parents] if not os.path.lexists(p)]
    for p in reversed(missing):
        p.mkdir(mode=0o700, exist_ok=True)
    for p in [path, *path.parents]:
        st = os.lstat(p)
        mine = st.st_uid in (os.getuid(), 0)
        shared = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX
        if stat.S_ISLNK(st.st_mode) and p in (path, path.parent):
            why = "is a symbolic link"
        elif not mine:
            why = "belongs to another user"
        elif shared:
            why = "is writable by others"
        else:
            continue
        raise PermissionError(
            f"ndgather: the cache directory {p} {why}, and a library built below it is "
            "loaded into this process: make it yours and writable by no one else, or set "
            "NDGATHER_CACHE_DIR")
    return path


def compiler(what: str) -> list:
    """The compiler's command: ``$CXX`` (which may hold arguments, ``ccache g++``), else the
    first of ``c++``, ``g++`` and ``clang++`` on PATH."""
    cxx = os.environ.get("CXX") or next(
        (c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if not cxx:
        raise RuntimeError(
            f"ndgather: its {what} is compiled on first use, and no C++ compiler was found "
            "(c++, g++ or clang++ on PATH); install one, or set CXX")
    try:
        return shlex.split(cxx)
    except ValueError as e:
        raise RuntimeError(f"ndgather: its {what} is compiled on first use, and CXX={cxx!r} "
                           f"cannot be read as a command ({e}); fix it, or unset it") from e


def build(what: str, source: str, kind: str, version: str, flags: Sequence[str]) -> str:
    """The path of the library ``what`` compiled from ``source`` (a file beside this module)
    with ``flags`` for the framework ``kind`` at ``version``, linked to this extension: built
    on first use, then taken from the cache (the key covers the source, the extension, the
    compiler, the version and the flags)."""
    cxx = compiler(what)
    code = Path(__file__).with_name(source)
    header = code.with_name("_kernel_abi.h")  # the ABI's structs, which both sources include
    core = Path(_core.__file__).resolve()
    info = core.stat()
    key = hashlib.sha256("\0".join(
        [code.read_text(), header.read_text(), str(core), str(info.st_size),
         str(info.st_mtime_ns), version, *cxx, *flags]).encode()).hexdigest()[:20]
    target = cache_dir(kind) / f"ndgather_{kind}_{key}.so"
    if os.path.lexists(target):
        return str(target)
    # The extension has no SONAME: the library records its path, and loads that one.
    fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(fd)
    command = [*cxx, "-shared", "-fPIC", "-O2", "-w", str(code), "-o", partial, *flags,
               str(core)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        os.unlink(partial)
        raise RuntimeError(f"ndgather: its {what} is compiled on first use, and the "
                           f"compiler {cxx[0]!r} could not be run ({e}); install one, or set "
                           "CXX") from e
    if done.returncode != 0:
        os.unlink(partial)
        raise RuntimeError(f"ndgather: compiling its {what} failed:\n  "
                           + " ".join(command) + "\n" + done.stderr[-4000:])
    os.chmod(partial, 0o755)
    os.replace(partial, target)
    return str(target)


def opened(path: str) -> int:
    """The built library, opened without following a link and checked: a regular file of
    the user's that no one else may write. Loading it through its descriptor loads the file
    checked, whatever its name points to by then."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() \
            or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        os.close(fd)
        raise PermissionError(f"ndgather: {path} is not a file of yours that only you may "
                              "write; it is not loaded")
    return fd
