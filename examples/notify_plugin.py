"""A notifier plugin in one file: observe lifecycle events and post them to a webhook, off the event path.

This is the pattern cao-notify-discord and cao-notify-slack follow, cut down to its bones:

- ``cao_startup(kernel)`` reads the plugin's setting (``CAO_EXAMPLE_WEBHOOK_URL``) from
  ``kernel.settings``; without it the plugin logs one line and stays inert;
- the observers (``cao_after_*``) run on the kernel's event loop thread, so they only put the event
  into a bounded queue: when the queue is full the event is dropped and counted, never waited for;
- one background thread takes events from the queue and posts them with httpx (imported there, not
  at the top, so loading the plugin stays cheap);
- ``cao_shutdown(kernel)`` lets the thread finish what is queued, within a short bound.

The program starts a stand-in webhook on 127.0.0.1, runs a real kernel with the tmux backend and the
offline mock agent (in a private tmux server and a temporary cao home, removed afterwards), creates a
session, hands a task off to a worker, deletes the session, and prints what the webhook received.
It needs tmux. Run it from the repository root with ``uv run python examples/notify_plugin.py``.

Output includes::

    webhook received 7 posts:
      terminal_created: supervisor started
      session_created: session cao-notify-example started
      terminal_created: developer started
      terminal_killed: developer closed
      handoff_finished: developer answered 'summarise the plan'
      terminal_killed: supervisor closed
      session_killed: session cao-notify-example ended
    dropped: 0
"""

from __future__ import annotations

import asyncio
import http.server
import json
import logging
import queue
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    DelegationResult,
    SessionInfo,
    Terminal,
    hookimpl,
)

from cao_kernel.kernel import Kernel
from cao_kernel.plugins import LoadPolicy

log = logging.getLogger("notify_example")

_STOP = object()


class WebhookNotifier:
    """Posts ``{"event": ..., "text": ...}`` to the URL in ``CAO_EXAMPLE_WEBHOOK_URL``."""

    def __init__(self, queue_size: int = 100) -> None:
        self.url: str | None = None
        self.dropped = 0
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None

    # -- start and stop -----------------------------------------------------------------------------

    @hookimpl
    def cao_startup(self, kernel: Any) -> None:
        self.url = kernel.settings.get("CAO_EXAMPLE_WEBHOOK_URL")
        if not self.url:
            log.info("CAO_EXAMPLE_WEBHOOK_URL is not set; the example notifier stays off")
            return
        self._thread = threading.Thread(target=self._send_all, name="example-notifier", daemon=True)
        self._thread.start()

    @hookimpl
    def cao_shutdown(self) -> None:
        if self._thread is None:
            return
        try:
            self._queue.put(_STOP, timeout=1.0)
        except queue.Full:
            pass  # the thread is stuck on a dead webhook; it is a daemon and dies with the process
        self._thread.join(timeout=2.0)  # a short bound: a dead webhook must not hold up shutdown
        self._thread = None

    # -- observers: queue and return ----------------------------------------------------------------

    def _emit(self, event: str, text: str) -> None:
        if self._thread is None:
            return
        try:
            self._queue.put_nowait({"event": event, "text": text})
        except queue.Full:
            self.dropped += 1

    @hookimpl
    def cao_after_session_created(self, session: SessionInfo) -> None:
        self._emit("session_created", f"session {session.name} started")

    @hookimpl
    def cao_after_session_killed(self, session_name: str) -> None:
        self._emit("session_killed", f"session {session_name} ended")

    @hookimpl
    def cao_after_terminal_created(self, terminal: Terminal) -> None:
        self._emit("terminal_created", f"{terminal.agent_profile} started")

    @hookimpl
    def cao_after_terminal_killed(self, terminal: Terminal) -> None:
        self._emit("terminal_killed", f"{terminal.agent_profile} closed")

    @hookimpl
    def cao_after_handoff_finished(self, result: DelegationResult) -> None:
        outcome = f"answered {result.output!r}" if result.success else f"failed: {result.message}"
        self._emit("handoff_finished", f"{result.agent_profile} {outcome}")

    # -- the sender thread --------------------------------------------------------------------------

    def _send_all(self) -> None:
        import httpx

        with httpx.Client(timeout=5.0) as client:
            while (item := self._queue.get()) is not _STOP:
                try:
                    client.post(self.url, json=item).raise_for_status()
                except httpx.HTTPError as exc:
                    # Never log the URL: a webhook URL is a secret.
                    log.warning("example notifier: a post failed (%s)", type(exc).__name__)


class Receiver:
    """A stand-in webhook: records the JSON bodies posted to it."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.posts.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hook/example-secret"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


async def run_session(kernel: Kernel, workdir: Path) -> None:
    async with kernel:  # start() calls cao_startup; leaving calls cao_shutdown
        supervisor = await kernel.create_session(CreateTerminalRequest(
            agent_profile="supervisor", session_name="notify-example", working_directory=str(workdir)))
        result = await kernel.handoff(supervisor.id, "developer", "summarise the plan", timeout=30)
        assert result.success, result.message
        await kernel.delete_session("notify-example")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="cao-example-") as tmp, Receiver() as receiver:
        socket = str(Path(tmp) / "tmux.sock")
        workdir = Path(tmp) / "project"
        workdir.mkdir()
        notifier = WebhookNotifier()
        kernel = Kernel(
            # Only the plugins this example needs: tmux, the mock agent and the durable inbox.
            policy=LoadPolicy(only=("tmux", "mock_cli", "inbox_sqlite")),
            home=Path(tmp) / "home",
            settings={"CAO_TMUX_SOCKET": socket, "CAO_EXAMPLE_WEBHOOK_URL": receiver.url},
        )
        kernel.register_plugin(notifier, name="example_notifier")
        for name in ("supervisor", "developer"):
            kernel.add_profile(AgentProfile(name=name, provider="mock_cli"))
        try:
            asyncio.run(run_session(kernel, workdir))
        finally:
            if shutil.which("tmux"):
                subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, check=False)

    print(f"webhook received {len(receiver.posts)} posts:")
    for post in receiver.posts:
        print(f"  {post['event']}: {post['text']}")
    print(f"dropped: {notifier.dropped}")


if __name__ == "__main__":
    main()
