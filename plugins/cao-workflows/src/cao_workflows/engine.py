"""The one DBOS instance of this process: where its journal lives, when it starts and stops, and the
bridge its worker threads use to reach the kernel on the server's event loop.

DBOS allows one instance per process and takes over a second of importing, so nothing here imports it
at module level. It is launched the first time a workflow is used, or at kernel start when a journal
already exists (pending runs are recovered then). ``application_version`` and ``executor_id`` are fixed:
DBOS recovers only the pending runs stamped with its own version and executor, and its default version
is a hash of the registered code, which any upgrade of cao or DBOS would change.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from .errors import WorkflowsUnavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Bumped only when the journal of a run started by an older cao cannot be replayed by this one.
APPLICATION_VERSION = "cao-workflows-1"
#: The journal, under the cao home.
DATABASE = Path("db") / "workflows.sqlite"
#: The node's name in the journal (several nodes sharing one database each recover their own runs).
EXECUTOR_SETTING = "CAO_NODE_ID"
DEFAULT_EXECUTOR = "cao-local"
# How often a worker thread blocked on the event loop looks up to see whether the server is stopping.
_STOP_POLL = 0.5

_lock = threading.Lock()
_engine: Engine | None = None


class ServerStopping(BaseException):  # noqa: N818 - a signal, not an error
    """Raised in DBOS worker threads when the server stops while a step waits on the kernel.

    Deliberately not an ``Exception``: DBOS records an ``Exception`` as the step's outcome (and fails
    the run), but lets anything else pass unrecorded, so the run stays pending and the next server
    start recovers it where it was.
    """


class Engine:
    """The running DBOS instance and the kernel it works for."""

    def __init__(self, kernel: Any, loop: asyncio.AbstractEventLoop, database: Path,
                 settings: Mapping[str, Any]) -> None:
        self.kernel = kernel
        self.loop = loop
        self.database = database
        self.settings = dict(settings)
        self.stopping = threading.Event()
        #: Set once DBOS has launched; the engine exists a moment earlier, for recovery's sake.
        self.launched = threading.Event()
        #: Runs cancelled through this engine: their waiting steps close their agents and stop.
        self.cancelled: set[str] = set()
        self._queues: set[str] = set()
        self._queue_lock = threading.Lock()

    # -- from DBOS worker threads ------------------------------------------------------------------

    def call(self, factory: Callable[[], Awaitable[T]]) -> T:
        """Run ``factory()`` (a kernel coroutine) on the server's loop and return its result; raises
        ``ServerStopping`` when the server stops first."""
        if self.stopping.is_set():
            raise ServerStopping()

        async def run() -> T:
            return await factory()

        future = asyncio.run_coroutine_threadsafe(run(), self.loop)
        # Waited for with ``wait``, not ``result(timeout=...)``: the call's own ``Timeout`` is a
        # ``TimeoutError`` too, and must reach the caller rather than read as "not done yet".
        while not concurrent.futures.wait([future], timeout=_STOP_POLL).done:
            if self.stopping.is_set():
                future.cancel()
                raise ServerStopping()
        return future.result()

    def report(self, kind: str, data: Mapping[str, Any]) -> None:
        """Tell the kernel's watchers what a run did (see :mod:`cao_workflows.activity`)."""
        from .activity import report

        if not self.stopping.is_set():
            self.loop.call_soon_threadsafe(report, self.kernel, kind, dict(data))

    def queue(self, profile: str) -> str:
        """The DBOS queue of ``profile``'s parallel steps, registered on first use: its
        ``global_concurrency`` is the per-profile limit."""
        from dbos import DBOS

        name = f"cao-profile-{profile}"
        with self._queue_lock:
            if name not in self._queues:
                DBOS.register_queue(name, global_concurrency=self.profile_limit(),
                                    polling_interval_sec=0.2, on_conflict="always_update")
                self._queues.add(name)
        return name

    def profile_limit(self) -> int:
        return _positive(self.settings, "CAO_WORKFLOW_PROFILE_CONCURRENCY", 4)

    def run_limit(self) -> int:
        return _positive(self.settings, "CAO_WORKFLOW_CONCURRENCY", 4)


def _positive(settings: Mapping[str, Any], name: str, default: int) -> int:
    raw = settings.get(name)
    try:
        value = int(raw) if raw not in (None, "") else default
    except ValueError:
        log.warning("%s=%r is not a whole number; using %d", name, raw, default)
        return default
    return max(1, value)


def database_path(kernel: Any) -> Path:
    """The journal of ``kernel``'s cao home."""
    from cao_server.settings import home_dir

    settings = getattr(kernel, "settings", None) or os.environ
    return Path(home_dir(settings, kernel)) / DATABASE


def current() -> Engine:
    """The engine, for code running inside a workflow."""
    engine = _engine
    if engine is None:
        raise WorkflowsUnavailable("the workflow engine is not running in this process")
    return engine


async def ensure(kernel: Any) -> Engine:
    """The engine for ``kernel``, launched now if it is not running (in a thread: launching reads the
    journal and starts DBOS's threads)."""
    engine = _engine
    if engine is not None and engine.launched.is_set():
        if engine.kernel is not kernel:
            raise WorkflowsUnavailable("workflows already run for another kernel in this process (DBOS "
                                       "allows one instance per process)")
        return engine
    loop = asyncio.get_running_loop()
    return await asyncio.to_thread(_launch, kernel, loop)


def _launch(kernel: Any, loop: asyncio.AbstractEventLoop) -> Engine:
    global _engine
    # The lock is held for the whole launch: a request arriving while recovery launches waits for it.
    with _lock:
        if _engine is not None:
            if _engine.kernel is not kernel:
                raise WorkflowsUnavailable("workflows already run for another kernel in this process (DBOS "
                                           "allows one instance per process)")
            return _engine
        from dbos import DBOS

        from . import journal  # noqa: F401 - registers the workflows before launch, as recovery needs

        database = database_path(kernel)
        database.parent.mkdir(parents=True, exist_ok=True)
        settings = dict(getattr(kernel, "settings", None) or {})
        engine = Engine(kernel, loop, database, settings)
        _engine = engine  # before launch: recovery starts replaying at once and needs the bridge
        try:
            DBOS(config={
                "name": "cao",
                "system_database_url": f"sqlite:///{database}",
                "application_version": APPLICATION_VERSION,
                "executor_id": str(settings.get(EXECUTOR_SETTING) or DEFAULT_EXECUTOR),
                "log_level": "WARNING",
                # Each running workflow and step holds a thread while it waits for its agent.
                "max_executor_threads": 64,
            })
            DBOS.launch()
            engine.launched.set()
        except BaseException:
            _engine = None
            raise
        log.info("workflow engine launched on %s", database)
        return engine


async def recover(kernel: Any) -> None:
    """At kernel start: launch the engine when a journal exists, so pending runs resume. A home that
    never ran a workflow costs nothing (DBOS is not even imported)."""
    if _engine is None and database_path(kernel).exists():
        await ensure(kernel)


def stop(kernel: Any) -> None:
    """At kernel shutdown: release the threads waiting on the kernel (their runs stay pending) and
    destroy the DBOS instance in a thread of its own (it joins DBOS's threads)."""
    global _engine
    with _lock:
        engine = _engine
        if engine is None or engine.kernel is not kernel:
            return
        engine.stopping.set()
        _engine = None

    def destroy() -> None:
        from dbos import DBOS

        DBOS.destroy(workflow_completion_timeout_sec=0)

    thread = threading.Thread(target=destroy, name="cao-workflows-stop", daemon=True)
    thread.start()
    thread.join(15)
