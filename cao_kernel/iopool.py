"""The kernel's pool of I/O threads: every blocking call (backend, store, disk) runs here, never on the
event loop. Calls that wait on another machine run on a ``NetPool`` of their own instead: how long they
take is the remote host's choice, and a few slow hosts must not hold the threads everything else needs."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from .errors import Conflict

T = TypeVar("T")

DEFAULT_THREADS = 32


class IoPool:
    """A bounded thread pool that coroutines await blocking calls on."""

    def __init__(self, threads: int = DEFAULT_THREADS, *, name: str = "cao-io") -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a pool thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    def close(self, *, wait: bool = False) -> None:
        """Take no more work; with ``wait``, also let running calls finish."""
        self._executor.shutdown(wait=wait)


class NetPool(IoPool):
    """A few threads for network calls, which refuses a call when all are busy instead of queueing it:
    a queued call would keep its caller waiting for other hosts, and start its own deadline late.

    :param what: what the calls are, plural, for the refusal (``"profile downloads"``).
    """

    def __init__(self, threads: int, *, what: str, name: str) -> None:
        super().__init__(threads, name=name)
        self._threads = threads
        self._what = what
        self._slots = threading.BoundedSemaphore(threads)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a pool thread; ``Conflict`` when every thread is busy."""
        if not self._slots.acquire(blocking=False):
            raise Conflict(
                f"{self._threads} {self._what} are already in progress; try again when one has finished")
        try:
            future = self._executor.submit(fn, *args, **kwargs)
        except BaseException:
            self._slots.release()
            raise
        # Released when the call ends, not when its caller stops waiting: the thread is busy until then.
        future.add_done_callback(lambda _: self._slots.release())
        return await asyncio.wrap_future(future)


__all__ = ["IoPool", "NetPool"]
