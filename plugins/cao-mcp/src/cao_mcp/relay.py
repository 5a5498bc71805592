"""The stdio relay: ``cao-mcp-server`` passing an agent's MCP messages to cao-server's ``/mcp``.

cao-server already serves cao's MCP tools over streamable HTTP, so the agent's stdio MCP server need not
load the MCP SDK (most of a second) to serve them again: it reads newline-delimited JSON-RPC from stdin,
POSTs each message to ``<server>/mcp`` naming the agent's terminal in ``X-CAO-Terminal-Id``, and writes
every message of the answer (a JSON body or a server-sent event stream) to stdout, one line each.

Only the standard library is imported here, and stdout carries nothing but protocol. Every request runs
in a thread of its own: a handoff blocks for minutes while the agent's pings, tool listings and
cancellations go on. A cancelled request's connection is closed and its answer is never written.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, BinaryIO

from .wire import CALL_HEADER, ID_HEADER, RELAY_HEADER, SECRET_HEADER, SECRET_VARIABLE, TERMINAL_ID_RE

MCP_PATH = "/mcp"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
ACCEPT = "application/json, text/event-stream"
# Seconds to wait for the server at start-up before serving from this process instead, and to open a
# connection for a message. Reading an answer has no limit: a handoff takes as long as its worker.
CHECK_TIMEOUT = 2.0
CONNECT_TIMEOUT = 10.0
# A handoff whose connection is lost waits this long (``CAO_MCP_RESUME_SECONDS``) for the server to come
# back, then asks again with the same call id: the restarted server resumes the same worker.
RESUME_SECONDS = 120.0
RESUME_POLL = 0.2
RESUMABLE_TOOLS = frozenset({"handoff"})
# cao_server.api_token's file name and token shape, restated: that module loads the whole contract package
# (see _read_token). A test holds the two equal.
TOKEN_FILE = "api-token"
TOKEN_PATTERN = r"^[A-Za-z0-9_-]{32,256}\Z"
# JSON-RPC error codes (the specification's, plus one in the range it leaves to servers).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SERVER_UNREACHABLE = -32000
# What an agent CLI asks for when it connects; it counts the server as connected once all are answered.
LIST_METHODS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
# Bytes asked of stdin per read: a pipe's default capacity, so one read takes all an agent wrote at once.
READ_SIZE = 65536


class Target:
    """Where the relay sends messages: cao-server's address, its token, and the caller's terminal id."""

    def __init__(self, base_url: str, terminal_id: str, token: str | None = None, *,
                 resume_seconds: float = RESUME_SECONDS, secret: str | None = None) -> None:
        from urllib.parse import urlsplit

        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) server address: {base_url!r}")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.terminal_id = terminal_id
        self.token = token
        self.resume_seconds = resume_seconds
        self.secret = secret

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        """A new connection, opened now (``timeout`` bounds the opening only)."""
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = kind(self.host, self.port, timeout=timeout)
        conn.connect()
        assert conn.sock is not None
        conn.sock.settimeout(None)
        return conn

    def headers(self) -> dict[str, str]:
        headers = {ID_HEADER: self.terminal_id, RELAY_HEADER: "1"}
        if self.secret:
            headers[SECRET_HEADER] = self.secret
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers


def find_server(settings: Mapping[str, str], terminal_id: str) -> Target | None:
    """The server to relay to, if one answers at the address in ``settings`` and knows ``terminal_id``:
    one request, ``GET /terminals/<id>``.

    Uses the address and token the ``cao`` client uses (``CAO_API_HOST``, ``CAO_API_PORT``, the token in
    ``CAO_HOME_DIR``). None when the address is unusable, nothing answers within ``CHECK_TIMEOUT``, or the
    server does not know the terminal: the caller then serves from this process, whose tools explain each
    problem or use the server's HTTP API. A server without cao-mcp (no ``/mcp``) is relayed to all the
    same; each answer then says so (``Relay._refused``), which costs every other start no second request.
    """
    # Standard library only, like everything the relay loads before it can answer ``initialize``.
    from cao_server.settings import DEFAULT_HOST, DEFAULT_PORT, advertised_host, base_url, home_dir

    if not TERMINAL_ID_RE.fullmatch(terminal_id):
        return None
    host = advertised_host(str(settings.get("CAO_API_HOST") or DEFAULT_HOST).strip())
    port = str(settings.get("CAO_API_PORT") or DEFAULT_PORT).strip()
    if not (port.isascii() and port.isdigit()) or int(port) > 65535:
        return None
    try:
        resume = min(3600.0, float(settings.get("CAO_MCP_RESUME_SECONDS") or RESUME_SECONDS))
    except ValueError:
        resume = RESUME_SECONDS
    if resume != resume:  # NaN
        resume = RESUME_SECONDS
    try:
        target = Target(base_url(host, port), terminal_id, _read_token(home_dir(settings)),
                        resume_seconds=max(0.0, resume), secret=settings.get(SECRET_VARIABLE) or None)
        conn = target.connection(CHECK_TIMEOUT)
    except (OSError, ValueError):
        return None
    try:
        conn.sock.settimeout(CHECK_TIMEOUT)  # type: ignore[union-attr]
        conn.request("GET", f"/terminals/{terminal_id}", headers=target.headers())
        response = conn.getresponse()
        response.read()
        return target if response.status == 200 else None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def _read_token(home: str) -> str | None:
    """The API token in the cao home ``home``, as ``cao_server.api_token.read_token`` reads it (None when
    the file is missing, unreadable or malformed), without loading that module and the contract package
    behind it."""
    import re

    try:
        with open(os.path.join(os.path.expanduser(home), TOKEN_FILE), encoding="ascii") as file:
            text = file.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if re.match(TOKEN_PATTERN, text) else None


# -- server-sent events ----------------------------------------------------------------------------


class SseEvent:
    """One dispatched event: its type (``message`` unless named), data and id."""

    __slots__ = ("data", "event", "id")

    def __init__(self, data: str, event: str = "message", id: str | None = None) -> None:
        self.data = data
        self.event = event
        self.id = id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SseEvent) and (self.data, self.event, self.id) == (other.data, other.event,
                                                                                    other.id)

    def __repr__(self) -> str:
        return f"SseEvent(data={self.data!r}, event={self.event!r}, id={self.id!r})"


class SseDecoder:
    """An incremental ``text/event-stream`` decoder, as the HTML standard specifies it.

    ``feed`` takes the body in chunks of any size (a line ending or a UTF-8 character may be split
    between two chunks) and returns the events completed so far. Lines end with CR LF, LF or CR; a line
    starting with ``:`` is a comment; ``data`` lines of one event are joined with LF; an event with no
    data is not dispatched; an event cut off by the end of the stream is dropped.
    """

    def __init__(self) -> None:
        import codecs

        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._after_cr = False
        self._first = True
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._last_id: str | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        text = self._text.decode(chunk)
        if self._first and text:
            self._first = False
            text = text.removeprefix("\ufeff")
        events: list[SseEvent] = []
        start = 0
        for index, char in enumerate(text):
            if char == "\n" and self._after_cr:
                self._after_cr = False
                start = index + 1
                continue
            self._after_cr = False
            if char in "\r\n":
                self._line(self._pending + text[start:index], events)
                self._pending = ""
                start = index + 1
                self._after_cr = char == "\r"
        self._pending += text[start:]
        return events

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if not line:
            if self._data:
                events.append(SseEvent("\n".join(self._data), self._event or "message", self._last_id))
            self._data, self._event = [], ""
            return
        if line.startswith(":"):
            return
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._last_id = value


def sse_events(chunks: Iterable[bytes]) -> Iterator[SseEvent]:
    """The events of a whole stream given in chunks."""
    decoder = SseDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)


# -- the relay -------------------------------------------------------------------------------------


class _Inflight:
    __slots__ = ("cancelled", "conn")

    def __init__(self) -> None:
        self.conn: http.client.HTTPConnection | None = None
        self.cancelled = False


class Relay:
    """Relays one agent's messages to ``target``. ``write`` puts one message on the agent's stdout.

    ``pending_input`` says whether the agent has sent lines the relay has not taken yet (``run`` looks at
    its stdin); while it does, the connection report waits for them, since they may be lists asked for
    together with those already answered. Whoever feeds the relay calls ``input_taken`` after each batch.

    The report carries the wall-clock times (``time.time()``) of the relay's start-up stages, so the
    server can tell where an agent's wait went: ``started`` (the process began, as given), ``asked`` (the
    agent's ``initialize`` was read), ``initialized`` (its answer was written) and ``listed`` (the last
    list's answer was written).
    """

    def __init__(self, target: Target, write: Callable[[bytes], None],
                 pending_input: Callable[[], bool] = lambda: False, *, started: float | None = None) -> None:
        self.target = target
        self._write = write
        self._pending_input = pending_input
        self._stages: dict[str, float] = {} if started is None else {"started": started}
        self._lock = threading.Lock()
        self._inflight: dict[Any, _Inflight] = {}
        self._session_id: str | None = None
        self._protocol_version: str | None = None
        # List requests not answered yet; the agent is reported connected once none is left after it
        # has been handed the tool list.
        self._listing: set[Any] = set()
        self._tools_listed = False
        self._reported = False
        self._report_due = False

    # -- input ------------------------------------------------------------------------------------

    def handle_line(self, line: bytes) -> threading.Thread | None:
        """Take one line from stdin; returns the thread forwarding it, if any."""
        threads = self.handle_lines([line])
        return threads[0] if threads else None

    def handle_lines(self, lines: Iterable[bytes]) -> list[threading.Thread]:
        """Take the lines of one read from stdin; returns the threads forwarding them.

        Every list among them is counted as asked for before any of them is forwarded: an agent writes
        the lists it asks for together at once, and the tool list's answer, back within a millisecond,
        must not count as the last one while the others are still being read.
        """
        messages = [(message, line.strip()) for line in lines if (message := self._parse(line)) is not None]
        batch: list[tuple[Any, bytes, dict[Any, Any], _Inflight]] = []
        with self._lock:
            for message, body in messages:
                requests = {_key(m["id"]): m for m in (message if isinstance(message, list) else [message])
                            if isinstance(m, dict) and "method" in m and m.get("id") is not None}
                entry = _Inflight()
                for key, request in requests.items():
                    self._inflight[key] = entry
                    if request.get("method") in LIST_METHODS:
                        self._listing.add(key)
                    elif request.get("method") == "initialize":
                        # When the agent asked, apart from when it was answered: whose wait it was.
                        self._stages.setdefault("asked", time.time())
                batch.append((message, body, requests, entry))
        # After the registration above, so that a cancellation read with its request finds it.
        for message, _, _, _ in batch:
            if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
                self._cancel(message.get("params"))
        threads = []
        for args in batch:
            thread = threading.Thread(target=self._forward, args=args, daemon=True, name="cao-mcp-relay")
            thread.start()
            threads.append(thread)
        return threads

    def input_taken(self) -> None:
        """The feeder has handed over what it held: a report deferred for it is made now (in a thread of
        its own, so the feeder goes back to reading at once)."""
        with self._lock:
            due, self._report_due = self._report_due, False
        if due:
            threading.Thread(target=self._report_when_listed, daemon=True, name="cao-mcp-report").start()

    def _parse(self, line: bytes) -> Any:
        """The message on ``line``; None, after answering any error, when there is none to forward."""
        if not line.strip():
            return None
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as exc:
            # RecursionError: nesting deeper than the interpreter's stack, which no agent sends.
            reason = exc if isinstance(exc, ValueError) else "nested too deeply"
            self._send({"jsonrpc": "2.0", "id": None,
                        "error": {"code": PARSE_ERROR, "message": f"Parse error: {reason}"}})
            return None
        if not isinstance(message, dict | list) or not message:
            self._send({"jsonrpc": "2.0", "id": None, "error": {
                "code": INVALID_REQUEST, "message": "Invalid Request: expected a JSON-RPC message object"}})
            return None
        return message

    def _cancel(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        with self._lock:
            entry = self._inflight.get(_key(params.get("requestId")))
        if entry is None:
            return
        entry.cancelled = True
        conn = entry.conn
        if conn is not None and conn.sock is not None:
            import socket

            try:
                # Wakes the thread blocked reading the answer; closing alone may not.
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # -- forwarding -------------------------------------------------------------------------------

    def _forward(self, message: dict[str, Any] | list[Any], body: bytes, requests: dict[Any, Any],
                 entry: _Inflight) -> None:
        keys = list(requests)
        answered: set[Any] = set()
        call_id = _resumable_call(message)
        try:
            self._post_resuming(body, requests, entry, answered, call_id)
        except (OSError, http.client.HTTPException) as exc:
            if not entry.cancelled:
                for key, request in requests.items():
                    if key not in answered:
                        self._send(self._unreachable(request, exc))
                if not requests:
                    _log(f"could not pass a message to cao-server at {self.target.base_url}: {_reason(exc)}")
        finally:
            with self._lock:
                for key in keys:
                    self._inflight.pop(key, None)
                    if key in self._listing:
                        self._listing.discard(key)
                        if not self._reported:
                            self._stages["listed"] = time.time()
            if entry.conn is not None:
                entry.conn.close()
            self._report_when_listed()

    def _report_when_listed(self) -> None:
        """Tell the server the agent is connected: it now holds cao's tool list and every list it asked
        for with it. This opens the agent's readiness gate, so its task is typed only when the tools
        exist for it."""
        with self._lock:
            if self._reported or not self._tools_listed or self._listing:
                return
            if self._pending_input():
                # Lines not taken yet may be lists asked for with these: ``input_taken`` decides again.
                self._report_due = True
                return
            self._reported = True
            body = json.dumps(self._stages).encode("ascii")
        try:
            conn = self.target.connection(CONNECT_TIMEOUT)
            try:
                conn.request("POST", f"/terminals/{self.target.terminal_id}/mcp-connected", body=body,
                             headers={**self.target.headers(), "Content-Type": "application/json"})
                response = conn.getresponse()
                response.read()
                if response.status >= 400:
                    _log(f"cao-server refused the connection report: HTTP {response.status}")
            finally:
                conn.close()
        except (OSError, http.client.HTTPException) as exc:
            _log(f"could not report the connection to cao-server at {self.target.base_url}: {_reason(exc)}")

    def _post_resuming(self, body: bytes, requests: Mapping[Any, Mapping[str, Any]], entry: _Inflight,
                       answered: set[Any], call_id: str | None) -> None:
        """``_post``; a resumable call whose connection is lost before its answer is asked again, with the
        same call id, once the server is back (within the target's resume window)."""
        until: float | None = None
        while True:
            try:
                self._post(body, requests, entry, answered, call_id)
                return
            except (OSError, http.client.HTTPException) as exc:
                if call_id is None or entry.cancelled or answered:
                    raise
                if until is None:
                    until = time.monotonic() + self.target.resume_seconds
                    _log(f"lost cao-server at {self.target.base_url} during a handoff ({_reason(exc)}); "
                         f"asking again once it is back")
                if entry.conn is not None:
                    entry.conn.close()
                    entry.conn = None
                if not self._server_back(entry, until):
                    raise

    def _server_back(self, entry: _Inflight, until: float) -> bool:
        """Whether the server accepts connections again before ``until`` (False once cancelled)."""
        while not entry.cancelled and time.monotonic() < until:
            try:
                self.target.connection(min(CONNECT_TIMEOUT, max(0.05, until - time.monotonic()))).close()
                return True
            except OSError:
                time.sleep(RESUME_POLL)
        return False

    def _post(self, body: bytes, requests: Mapping[Any, Mapping[str, Any]], entry: _Inflight,
              answered: set[Any], call_id: str | None = None) -> None:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, **self.target.headers()}
        if call_id is not None:
            headers[CALL_HEADER] = call_id
        if self._session_id:
            headers[SESSION_HEADER] = self._session_id
        if self._protocol_version:
            headers[VERSION_HEADER] = self._protocol_version
        entry.conn = conn = self.target.connection(CONNECT_TIMEOUT)
        if entry.cancelled:
            return
        conn.request("POST", MCP_PATH, body=body, headers=headers)
        response = conn.getresponse()
        session = response.getheader(SESSION_HEADER)
        if session:
            self._session_id = session
        kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if kind == "text/event-stream" and response.status < 400:
            decoder = SseDecoder()
            while chunk := response.read1(65536):
                for event in decoder.feed(chunk):
                    if event.event == "message" and event.data.strip():
                        self._deliver(event.data, requests, answered, entry)
        else:
            data = response.read()
            if response.status >= 400 or (data.strip() and kind != "application/json"):
                self._refused(response.status, data, requests, answered, entry)
            elif data.strip():
                self._deliver(data.decode("utf-8", "replace"), requests, answered, entry)
        if entry.cancelled:
            return
        for key, request in requests.items():
            if key not in answered:
                self._send(_error(request.get("id"), SERVER_UNREACHABLE,
                                  f"cao-server at {self.target.base_url} ended its answer to "
                                  f"{request.get('method')!r} without a result"))

    def _deliver(self, text: str, requests: Mapping[Any, Any], answered: set[Any], entry: _Inflight) -> None:
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            _log(f"cao-server at {self.target.base_url} sent something that is not JSON; dropped")
            return
        for part in message if isinstance(message, list) else [message]:
            if not isinstance(part, dict):
                continue
            key = _key(part.get("id"))
            initialized = False
            if "method" not in part and key in requests:
                answered.add(key)
                request = requests[key]
                if request.get("method") == "tools/list" and isinstance(part.get("result"), dict):
                    # Set before the answer goes out: the report follows the hand-back, never precedes it.
                    self._tools_listed = True
                if request.get("method") == "initialize" and isinstance(part.get("result"), dict):
                    initialized = True
                    version = part["result"].get("protocolVersion")
                    if isinstance(version, str) and version.isprintable():
                        self._protocol_version = version
            if not entry.cancelled:
                if initialized:
                    with self._lock:
                        self._stages.setdefault("initialized", time.time())
                self._send(part)

    def _refused(self, status: int, data: bytes, requests: Mapping[Any, Any], answered: set[Any],
                 entry: _Inflight) -> None:
        """An HTTP error answer: the server's own JSON-RPC error when it sent one, else one naming the
        status; either way addressed to the request it answers."""
        detail: Any = None
        try:
            parsed = json.loads(data) if data.strip() else None
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            detail = parsed["error"]
        elif isinstance(parsed, dict) and isinstance(parsed.get("detail"), str):
            detail = parsed["detail"]
        if status == 404 and not isinstance(detail, dict):
            text = (f"cao-server at {self.target.base_url} does not serve MCP at {MCP_PATH} (HTTP 404); "
                    f"install cao-mcp where the server runs")
        elif isinstance(detail, dict):
            text = str(detail.get("message") or f"HTTP {status}")
        else:
            snippet = (detail or data.decode("utf-8", "replace")).strip()[:300]
            text = f"cao-server at {self.target.base_url} answered HTTP {status}" + (f": {snippet}" if snippet
                                                                                    else "")
        if not requests:
            _log(f"cao-server refused a notification: {text}")
            return
        for key, request in requests.items():
            if key in answered or entry.cancelled:
                continue
            answered.add(key)
            if isinstance(detail, dict) and isinstance(detail.get("code"), int):
                self._send({"jsonrpc": "2.0", "id": request.get("id"), "error": detail})
            else:
                self._send(_error(request.get("id"), SERVER_UNREACHABLE, text))

    def _unreachable(self, request: Mapping[str, Any], exc: BaseException) -> dict[str, Any]:
        where = self.target.base_url
        text = (f"cao-server is not reachable at {where} ({_reason(exc)}). Start it with `cao server` (or "
                f"the `cao-server` script), then try again.")
        if request.get("method") == "tools/call":
            # A tool result the model reads, rather than a protocol error an agent CLI may hide.
            return {"jsonrpc": "2.0", "id": request.get("id"),
                    "result": {"content": [{"type": "text", "text": text}], "isError": True}}
        return _error(request.get("id"), SERVER_UNREACHABLE, text)

    # -- output -----------------------------------------------------------------------------------

    def _send(self, message: Mapping[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._write(data)


def _key(value: Any) -> Any:
    # JSON-RPC ids are strings or numbers; 1 and "1" are different requests.
    return (type(value).__name__, value) if isinstance(value, str | int | float) else None


def _resumable_call(message: Any) -> str | None:
    """A fresh call id for a single call of a resumable tool (its retry repeats it), else None."""
    if not isinstance(message, dict) or message.get("method") != "tools/call" or message.get("id") is None:
        return None
    params = message.get("params")
    if not isinstance(params, dict) or params.get("name") not in RESUMABLE_TOOLS:
        return None
    import uuid

    return uuid.uuid4().hex


def _error(request_id: Any, code: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, http.client.RemoteDisconnected | ConnectionResetError | BrokenPipeError):
        return "the server closed the connection"
    if isinstance(exc, http.client.IncompleteRead):
        return "the server closed the connection mid-answer"
    return str(exc).strip() or type(exc).__name__


def _log(text: str) -> None:
    try:
        sys.stderr.write(f"cao-mcp-server: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class LineWriter:
    """Writes one message per line to ``stream``: whole lines only, even when threads write at once.

    ``close`` waits for a write in progress and drops every later one, so a thread still answering
    never touches the stream while the interpreter shuts it down.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._closed = False

    def __call__(self, data: bytes) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                self.stream.write(data + b"\n")
                self.stream.flush()
            except (OSError, ValueError):
                self._closed = True  # the agent is gone; its stdin closing ends the relay

    def close(self) -> None:
        with self._lock:
            self._closed = True


class LineReader:
    """Reads a pipe in whole lines, taking at once whatever it holds (``batch``), and tells whether input
    waits that has not been handed over yet (``pending``): being read, part of a line, or in the pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._busy = False
        self._partial: list[bytes] = []  # the start of a line, in chunks: joined once, when it ends

    def batch(self) -> list[bytes] | None:
        """The complete lines of the next read (possibly none); None at the end of the input."""
        try:
            # Marked busy only once input is there, before it leaves the pipe: ``pending`` sees it in
            # the pipe or as busy, never neither, until ``handed_over``.
            select.select([self.fd], [], [])
            self._busy = True
            chunk = os.read(self.fd, READ_SIZE)
        except (OSError, ValueError):
            self._busy, chunk = True, b""
        if not chunk:
            last = b"".join(self._partial)
            self._partial = []
            return [last] if last else None
        end = chunk.rfind(b"\n")
        if end < 0:
            self._partial.append(chunk)
            return []
        lines = b"".join([*self._partial, chunk[:end]]).split(b"\n")
        self._partial = [chunk[end + 1:]] if end + 1 < len(chunk) else []
        return lines

    def handed_over(self) -> None:
        """The lines of the last batch are the relay's now."""
        self._busy = False

    def pending(self) -> bool:
        if self._busy or self._partial:
            return True
        try:
            return bool(select.select([self.fd], [], [], 0)[0])
        except (OSError, ValueError):
            return False


def run(target: Target, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None, *,
        started: float | None = None) -> int:
    """Relay until stdin ends; returns the exit status. Requests still running are abandoned then: the
    agent that sent them is gone. ``started``: when the process began (``time.time()``), for the report."""
    source = stdin if stdin is not None else sys.stdin.buffer
    writer = LineWriter(stdout if stdout is not None else (sys.__stdout__ or sys.stdout).buffer)
    reader = LineReader(source.fileno())
    relay = Relay(target, writer, pending_input=reader.pending, started=started)
    try:
        while (lines := reader.batch()) is not None:
            relay.handle_lines(lines)
            reader.handed_over()
            relay.input_taken()
    finally:
        writer.close()
    return 0


__all__ = ["LineReader", "LineWriter", "Relay", "SseDecoder", "SseEvent", "Target", "find_server", "run",
           "sse_events"]
