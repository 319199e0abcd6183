"""Rows handed back through shared memory, for servers on the client's own host.

The client makes an anonymous memory file (:class:`_SharedBuffer`); a server on the same
host maps it through ``/proc/<pid>/fd`` (:func:`_map_shared`, which first checks that the
file is still the one meant) and writes its rows into it, so that a large lookup's rows
cross no socket. A probe buffer (:func:`_probe_buffer`) tells whether a server shares the
client's memory at all.
"""

from __future__ import annotations

import mmap
import os
import threading
import weakref
from typing import Tuple

import numpy as np


# Lookups whose rows take at least this many bytes come back through shared memory where
# every server shares the client's host: below it, a message costs no more.
_SHARED_MIN_BYTES = 1 << 20


def _map_shared(path: str, nbytes: int, identity: Tuple[int, int]) -> mmap.mmap:
    """``nbytes`` of the memory file at ``path``, mapped shared and writable, if it is still
    the file ``identity`` (its device and inode) names: a client's descriptor number is
    reused once the client closes it, and a server called for a buffer the client has
    since dropped must not write into the next file that took its number. Only a memory
    file (``memfd``) is written: never a file on disk, whatever its identity."""
    if not os.readlink(path).startswith("/memfd:"):
        raise RuntimeError(f"{path} is not a memory file of the client's")
    fd = os.open(path, os.O_RDWR)
    try:
        found = os.fstat(fd)
        if (found.st_dev, found.st_ino) != tuple(identity):
            raise RuntimeError(f"the client's memory file at {path} is not the one this call "
                               "was for: the client has dropped it")
        return mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)


class _SharedBuffer:
    """A memory file of the client's (``memfd``) that servers on the client's host map
    through ``/proc/<pid>/fd``, write their rows into, and the client reads in place: the
    rows cross no socket. It is anonymous, so it is freed with the last mapping of it,
    even if the client dies."""

    def __init__(self, nbytes, row_bytes):
        self.nbytes, self.row_bytes = max(nbytes, 1), row_bytes  # mmap takes no 0 bytes
        fd = os.memfd_create("ndgather-lookup")
        try:
            os.ftruncate(fd, self.nbytes)
            self.map = mmap.mmap(fd, self.nbytes)
        except BaseException:
            os.close(fd)
            raise
        self.key = os.urandom(16).hex()  # servers key their mappings by it
        self.path = f"/proc/{os.getpid()}/fd/{fd}"
        # What a server checks before it writes: the path names a descriptor number,
        # which the next memory file takes once this one is closed.
        found = os.fstat(fd)
        self.identity = (found.st_dev, found.st_ino)
        #: Unmaps and closes the file (once; at the latest when the buffer is collected).
        self.close = weakref.finalize(self, _close_shared, self.map, fd)

    def rows(self, count, row_shape, dtype):
        """The first ``count`` rows, as the servers wrote them."""
        return np.ndarray((count,) + row_shape, dtype, self.map)


def _close_shared(mapping, fd):
    mapping.close()
    os.close(fd)


# A buffer that tells whether a server shares the client's memory: its first bytes, a
# random token, must read the same from the server (made at the first large lookup).
_probe_lock = threading.Lock()
_probe = None


def _probe_buffer():
    """This process's probe: its buffer and token (a forked child makes its own)."""
    global _probe
    with _probe_lock:
        if _probe is None or _probe[0] != os.getpid():
            buffer, token = _SharedBuffer(64, 0), os.urandom(32)
            buffer.map[:len(token)] = token
            _probe = (os.getpid(), buffer, token)
        return _probe[1:]
