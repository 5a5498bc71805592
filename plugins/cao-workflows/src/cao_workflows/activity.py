"""The one place workflows tell the kernel's watchers what they did (``KernelAPI.report_activity``:
kinds ``workflow.run``, ``workflow.step``, ``workflow.approval``). A kernel without that method gets
nothing, and a watcher's failure never reaches a run."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)
# Tasks in flight, held so the loop does not drop them before they finish.
_pending: set[asyncio.Task[Any]] = set()


def report(kernel: Any, kind: str, data: Mapping[str, Any]) -> None:
    """Report ``kind`` with ``data`` (JSON-ready: ``run_id``, ``state``, ``name``, ``step``,
    ``summary``). Call it on the kernel's event loop."""
    method = getattr(kernel, "report_activity", None)
    if method is None:
        return
    try:
        result = method(kind, dict(data))
    except Exception:  # noqa: BLE001 - observers must not break runs
        log.warning("report_activity(%s) failed", kind, exc_info=True)
        return
    if inspect.isawaitable(result):
        task = asyncio.ensure_future(result)
        _pending.add(task)
        task.add_done_callback(_done)


def _done(task: asyncio.Task[Any]) -> None:
    _pending.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.warning("report_activity failed: %s", task.exception())


def summary(text: str, limit: int = 200) -> str:
    """One line of at most ``limit`` characters, for an event's ``summary``."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
