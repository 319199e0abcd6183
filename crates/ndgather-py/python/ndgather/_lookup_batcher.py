"""Lookups from concurrent threads, batched into shared round trips to the shard servers.

A lookup that arrives while a batch is in flight waits for it; the next batch then carries
every waiting lookup's ids, merged by shard and policy, from the client's event loop
(:class:`_Batcher`). Every caller is answered by its own deadline.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from typing import List, Optional

import numpy as np

from . import _shard_socket
from ._deadlines import _RECOVERY_SECONDS, _remaining


class _Call:
    """One lookup's calls of its shards: ``(shard key, server, ids, policy)`` parts, the
    lookup's deadline and, once answered, their rows or the error."""

    def __init__(self, parts: list, deadline: float):
        self.parts, self.deadline = parts, deadline
        self.rows = self.error = None
        self.batch = None  # the batch that carries it, once sent
        self.settled = False  # answered (under the batcher's lock); `done` is set after
        self.done = threading.Event()


class _Batch:
    """Calls sent together, and the future of their answer."""

    def __init__(self, calls: List[_Call]):
        self.calls = calls
        self.future: Optional[concurrent.futures.Future] = None


class _Batcher:
    """Lookups from concurrent callers, sent together: a lookup that arrives while a batch
    is in flight waits, and the answer of that batch sends every waiting lookup's ids at
    once, from the client's event loop (one call per shard, awaited together).

    Every caller is answered by its deadline: with its rows, the batch's error, or a
    ``TimeoutError``, even if the batch's future never resolves (the loop closed or
    stopped, its task destroyed); the batch after it is then sent."""

    def __init__(self, loop):
        self._loop = loop  # the client's asyncio loop
        self._lock = threading.Lock()
        self._waiting = []
        self._in_flight = None  # the batch being answered

    def run(self, parts: list, deadline: float) -> list:
        call = _Call(parts, deadline)
        with self._lock:
            self._waiting.append(call)
            batch = self._next() if self._in_flight is None else None
        if batch is not None:
            self._send(batch)
        if not call.done.wait(max(0.0, deadline - time.monotonic())):
            self._expire(call)
        if call.error is not None:
            raise call.error
        return call.rows

    def _next(self) -> Optional[_Batch]:
        """The waiting calls as the batch in flight (the lock held), or ``None``."""
        self._in_flight = _Batch(self._waiting) if self._waiting else None
        self._waiting = []
        for c in self._in_flight.calls if self._in_flight else ():
            c.batch = self._in_flight
        return self._in_flight

    def _send(self, batch: _Batch) -> None:
        """Sends ``batch`` (no lock held: a future already done runs its callback at once):
        the parts of its lookups merged by shard and policy, given until the latest of
        their deadlines (at most ``_CALL_SECONDS``)."""
        groups, coroutine = {}, None
        try:
            for c in batch.calls:
                for key, server, ids, policy in c.parts:
                    groups.setdefault((key, policy), (server, policy, []))[2].append(ids)
            requests = [(server, ids[0] if len(ids) == 1 else np.concatenate(ids), policy)
                        for server, policy, ids in groups.values()]
            seconds = _remaining(max(c.deadline for c in batch.calls))
            coroutine = _await_all(requests, seconds)
            future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        except BaseException as e:  # noqa: BLE001 - the batch's callers raise it
            if coroutine is not None:
                coroutine.close()  # never scheduled (the loop is closed)
            future = concurrent.futures.Future()
            future.set_exception(e)
        batch.future = future
        future.add_done_callback(lambda f: self._answer(batch, list(groups), f))

    def _answer(self, batch: _Batch, keys: list, future: concurrent.futures.Future) -> None:
        """Hands each lookup its rows (or the error), then sends the next batch."""
        rows, error = {}, None
        try:
            answers = dict(zip(keys, future.result()))
            starts = dict.fromkeys(keys, 0)
            for c in batch.calls:
                rows[c] = []
                for key, _, ids, policy in c.parts:
                    start = starts[(key, policy)]
                    rows[c].append(answers[(key, policy)][start:start + len(ids)])
                    starts[(key, policy)] = start + len(ids)
        except concurrent.futures.CancelledError:
            error = RuntimeError("the lookup's batch was cancelled")
        except BaseException as e:  # noqa: BLE001 - the batch's callers raise it
            error = e
        self._settle(batch.calls, rows, error)

    def _expire(self, call: _Call) -> None:
        """``call``'s deadline has passed with no answer: it raises ``TimeoutError``; a
        batch none of whose calls waits any more gives way to the next."""
        self._settle([call], {}, TimeoutError(
            f"the lookup got no answer from the shard servers by its deadline "
            f"({_RECOVERY_SECONDS} s)"))

    def _settle(self, calls: List[_Call], rows: dict, error: Optional[BaseException]) -> None:
        """Answers those of ``calls`` not answered yet (rows, else ``error``); once every
        call of the batch in flight is answered, the next batch goes."""
        with self._lock:
            answered = [c for c in calls if not c.settled]
            for c in answered:
                c.settled = True
                c.rows, c.error = rows.get(c), None if c in rows else error
                if c.batch is None:  # expired before it was sent
                    self._waiting.remove(c)
            following = None
            if self._in_flight is not None and all(c.settled for c in self._in_flight.calls):
                following = self._next()
        for c in answered:
            c.done.set()
        # A batch whose callers all gave up is not cancelled from here: its coroutine ends at
        # its own deadline, on the loop, if the loop runs at all.
        if following is not None:
            self._send(following)


async def _await_all(requests: list, seconds: float) -> list:
    """On the client's event loop: every ``(server, ids, policy)`` call sent at once, then
    awaited together, for at most ``seconds``."""
    return await _shard_socket.cancelled_after(
        asyncio.gather(*(server.take(ids, policy) for server, ids, policy in requests)),
        seconds)
