"""Waiting in tests for something to become true, from a thread or from an event loop.

cao itself never polls: status and messages are pushed. A test, though, often has nothing to subscribe
to (a file a program writes, a row in another process's database, a pane's text), so it looks again
until the answer is truthy or the time is up, and then fails saying what it waited for.

- :func:`wait_until`: from synchronous test code.
- :func:`eventually`: from a coroutine; the check may be a plain function or a coroutine function.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["eventually", "wait_until"]


def _late(what: str, timeout: float) -> AssertionError:
    return AssertionError(f"{what or 'the condition'}: not within {timeout:g} s")


def wait_until(predicate: Callable[[], Any], timeout: float = 5.0, what: str = "",
               interval: float = 0.02) -> Any:
    """Call ``predicate`` until it returns something truthy, and return that; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise _late(what, timeout)
        time.sleep(interval)
    return value


async def eventually(check: Callable[[], Awaitable[Any] | Any], timeout: float, what: str = "",
                     interval: float = 0.1) -> Any:
    """:func:`wait_until` for a coroutine: the loop keeps running between looks, and ``check`` may be
    awaitable."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise _late(what, timeout)
        await asyncio.sleep(interval)
