"""The time bounds of a sharded lookup, and the bounded wait on the client's event loop.

A lookup has a deadline (:data:`_RECOVERY_SECONDS` from its start), each attempt at a
server a share of it (:func:`_remaining`), and a caller's thread waits on the client's
event loop no longer than that (:func:`_on_loop`), even if the loop never runs what it
was given.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from typing import Any, Coroutine

from distributed import Client

from . import _shard_socket


# How long a lookup may take, end to end, while Dask recovers a lost worker's shards: past
# it the lookup raises TimeoutError.
_RECOVERY_SECONDS = 120
# The longest one attempt waits on a server (a batch of socket calls, an actor call), so
# that a server that went silent leaves time to make it again.
_CALL_SECONDS = 30
# How long a lookup whose connection to a server broke waits for the scheduler to see that
# the server's worker is gone (it may not have yet, on a loaded machine) before it takes
# the error as the server's own.
_NOTICE_SECONDS = 10


def _remaining(deadline: float, attempt: bool = True) -> float:
    """Seconds left until ``deadline`` (``time.monotonic``), for one attempt at most
    ``_CALL_SECONDS``; ``TimeoutError`` once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(f"the lookup did not finish in {_RECOVERY_SECONDS} s")
    return min(left, _CALL_SECONDS) if attempt else left


def _on_loop(client: Client, coroutine: Coroutine, seconds: float) -> Any:
    """``coroutine`` run on the client's event loop from another thread, given ``seconds``:
    ``TimeoutError`` then, even if the loop never runs it (closed or stopped)."""
    future = asyncio.run_coroutine_threadsafe(_shard_socket.within(coroutine, seconds),
                                              client.loop.asyncio_loop)
    try:
        return future.result(seconds + 1)  # the coroutine's own deadline comes first
    except concurrent.futures.TimeoutError as e:  # not the builtin before Python 3.11
        future.cancel()
        raise TimeoutError(f"the client's event loop gave no answer in {seconds:g} s") from e
