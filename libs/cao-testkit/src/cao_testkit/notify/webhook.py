"""A fake webhook for tests: a real HTTP server on 127.0.0.1 that records what it is sent.

It answers every POST from a script of ``Reply`` objects (then with the default reply, the service's
``ok_reply()``), so a test can play a healthy webhook, a failing one (500), a rate-limiting one (429
with ``Retry-After``) or a hanging one::

    with FakeWebhook() as hook:
        hook.script(Reply(status=429, headers={"Retry-After": "0.3"}), Reply(status=204))
        ... point the notifier's CAO_<SERVICE>_WEBHOOK_URL at hook.url, run the kernel ...
        assert hook.event_kinds() == ["session_created"]

A notifier subclasses ``FakeWebhook`` to play its service: the shape of its URL path, its healthy
answer, and where a post names its event kind (``event_kind``); :mod:`.discord` and :mod:`.slack` are
cao's two. Standard library only.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FakeWebhook", "Received", "Reply"]


@dataclass
class Reply:
    """One scripted answer. ``body`` may be bytes, text or a JSON-ready value; ``hang`` never answers
    (until the server closes); ``delay`` waits before answering."""

    status: int = 204
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = b""
    delay: float = 0.0
    hang: bool = False

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")


@dataclass(frozen=True)
class Received:
    """One request as the server saw it; ``at`` is ``time.monotonic()`` when its body had arrived."""

    at: float
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FakeWebhook:
    """A threaded HTTP server playing a webhook. Use as a context manager, or ``start()``/``close()``.

    :param path: the path of ``url`` (default ``default_path``); its last part plays the secret token.
    :param default: the answer once the script is used up (default ``ok_reply()``).
    """

    #: The path of ``url`` unless one is given, shaped like the service's webhook URLs.
    default_path = "/hooks/fake-webhook-token"

    def __init__(self, path: str | None = None, default: Reply | None = None) -> None:
        self.path = path or self.default_path
        self.default = default or self.ok_reply()
        self._script: deque[Reply] = deque()
        self._received: list[Received] = []
        self._cond = threading.Condition()
        self._release = threading.Event()
        self._active = 0
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the fake webhook first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.path}"

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order; then with the default reply."""
        with self._cond:
            self._script.extend(replies)

    @property
    def received(self) -> list[Received]:
        with self._cond:
            return list(self._received)

    def payloads(self) -> list[Any]:
        return [r.json() for r in self.received]

    @classmethod
    def ok_reply(cls) -> Reply:
        """How the service answers a post it accepted."""
        return Reply(status=204)

    def event_kind(self, payload: Any) -> str:
        """The cao event kind a post's JSON names; the service's subclass knows where it is."""
        raise NotImplementedError(f"{type(self).__name__} does not know where a post names its event kind")

    def event_kinds(self) -> list[str]:
        """The cao event kind of every post, in arrival order."""
        return [self.event_kind(payload) for payload in self.payloads()]

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        """Block until at least ``count`` requests arrived; raises AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._received) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the fake webhook got {len(self._received)} request(s), "
                                         f"expected {count} within {timeout} s")
                self._cond.wait(left)
            return list(self._received)

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> FakeWebhook:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's naming
                owner._handle(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-webhook", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Release hanging requests, stop the server and wait for its handlers to finish."""
        self._release.set()
        if self._server is None:
            return
        self._server.shutdown()
        with self._cond:
            deadline = time.monotonic() + 5
            while self._active and time.monotonic() < deadline:
                self._cond.wait(0.05)
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._server = None

    def __enter__(self) -> FakeWebhook:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _handle(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        with self._cond:
            self._active += 1
        try:
            length = int(handler.headers.get("Content-Length") or 0)
            body = handler.rfile.read(length) if length else b""
            with self._cond:
                reply = self._script.popleft() if self._script else self.default
                self._received.append(Received(
                    at=time.monotonic(), method=handler.command, path=handler.path,
                    headers={k.lower(): v for k, v in handler.headers.items()}, body=body,
                ))
                self._cond.notify_all()
            if reply.hang:
                self._release.wait()
                handler.close_connection = True
                return
            if reply.delay:
                time.sleep(reply.delay)
            payload = reply.encoded()
            handler.send_response(reply.status)
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            if payload and not any(k.lower() == "content-type" for k in reply.headers):
                plain = isinstance(reply.body, (bytes, str))
                content_type = "text/plain; charset=utf-8" if plain else "application/json"
                handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            if payload:
                handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): nothing to answer
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()
