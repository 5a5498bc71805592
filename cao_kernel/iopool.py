"""The kernel's pool of I/O threads: every blocking call (backend, store, disk) runs here, never on the
event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_THREADS = 32


class IoPool:
    """A bounded thread pool that coroutines await blocking calls on."""

    def __init__(self, threads: int = DEFAULT_THREADS) -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="cao-io")

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on a pool thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    def close(self, *, wait: bool = False) -> None:
        """Take no more work; with ``wait``, also let running calls finish."""
        self._executor.shutdown(wait=wait)


__all__ = ["IoPool"]
