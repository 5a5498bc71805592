"""Scripted model turns, and the threaded HTTP server that serves them to a real agent CLI.

A test writes what the model does, turn by turn, in plain Python::

    script = Script(
        reply("Hello!"),                                       # answer with this text
        call_tool("mcp__cao-mcp-server__send_message",         # call a tool...
                  {"receiver_id": "abcd1234", "message": "hi"}),
        think(3, reply("Done.")),                              # ...take 3 s, then answer
        respond(lambda conv: reply(conv.last_user_text.upper())),   # decide from the conversation
    )

Each request the agent sends for its next step consumes one turn; requests an agent makes on the side
(titles, summaries, quota probes: the API server decides which are which) get ``side`` answers and
consume nothing. Every request is recorded, with the conversation it carried normalised into
:class:`Conversation`, so tests can assert on what the agent sent (tool results included).

The wire formats live in sibling modules (``anthropic``: the Messages API; ``openai``: the Responses
API); each subclasses :class:`ScriptedServer` and turns a :class:`Turn` into its own events.
"""

from __future__ import annotations

import http.server
import json
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

__all__ = [
    "Answer",
    "Conversation",
    "Failure",
    "Hold",
    "Message",
    "RecordedRequest",
    "Respond",
    "Script",
    "ScriptError",
    "ScriptedServer",
    "ToolCall",
    "ToolResult",
    "Turn",
    "call_tool",
    "fail",
    "hold",
    "reply",
    "respond",
    "think",
]

#: What the model says when a test's script has no turn left (the request is also recorded as a problem).
EXHAUSTED_TEXT = "[scripted model: the script has no turn left]"


def _mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    import types

    return types.MappingProxyType(dict(value or {}))


def _tuple(value: Iterable[Any] | None) -> tuple[Any, ...]:
    return tuple(value or ())


# -- the conversation an agent sends, normalised over wire formats ---------------------------------


@attrs.frozen(kw_only=True)
class ToolCall:
    """A tool call the model makes (scripted) or made earlier (seen in a conversation).

    ``arguments`` is the decoded JSON object; ``call_id`` is generated when a script leaves it out.
    """

    name: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict, converter=_mapping)
    call_id: str = attrs.field(factory=lambda: "call_" + secrets.token_hex(8))


@attrs.frozen(kw_only=True)
class ToolResult:
    """What the agent sent back for one tool call: ``output`` flattened to text."""

    call_id: str
    output: str
    is_error: bool = False


@attrs.frozen(kw_only=True)
class Message:
    """One message of a conversation: ``role`` is ``user`` or ``assistant``."""

    role: str
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = attrs.field(factory=tuple, converter=_tuple)
    tool_results: tuple[ToolResult, ...] = attrs.field(factory=tuple, converter=_tuple)


@attrs.frozen(kw_only=True)
class Conversation:
    """The conversation carried by one request, as the model would see it.

    ``tools`` names the tools the agent offered the model in that request.
    """

    model: str = ""
    system: str = ""
    messages: tuple[Message, ...] = attrs.field(factory=tuple, converter=_tuple)
    tools: tuple[str, ...] = attrs.field(factory=tuple, converter=_tuple)
    stream: bool = False

    @property
    def last_user_text(self) -> str:
        """The text of the latest user message that has any text ('' when none has)."""
        for message in reversed(self.messages):
            if message.role == "user" and message.text:
                return message.text
        return ""

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        """Every tool result in the conversation, oldest first."""
        return tuple(result for message in self.messages for result in message.tool_results)

    @property
    def last_tool_result(self) -> ToolResult | None:
        """The result the agent just sent: the newest tool result when its latest message carries one.

        Messages in the ``system`` role (notes some agents append after the result) are passed over.
        """
        for message in reversed(self.messages):
            if message.role == "system":
                continue
            return message.tool_results[-1] if message.tool_results else None
        return None

    def tool_call(self, call_id: str) -> ToolCall | None:
        """The earlier call with this id, or None."""
        for message in self.messages:
            for call in message.tool_calls:
                if call.call_id == call_id:
                    return call
        return None


# -- turns -----------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Answer:
    """One model response: optional text, then optional tool calls.

    ``delay`` holds the response back that many seconds (the model "thinks"; a streaming server keeps
    the connection alive meanwhile). ``chunks`` is how many pieces the text is streamed in.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = attrs.field(factory=tuple, converter=_tuple)
    delay: float = 0.0
    chunks: int = 3

    def __attrs_post_init__(self) -> None:
        if self.delay < 0:
            raise ValueError(f"a turn's delay must be >= 0 seconds, got {self.delay!r}")
        if not self.text and not self.tool_calls:
            raise ValueError("an answer needs text, tool calls or both")


@attrs.frozen(kw_only=True)
class Failure:
    """The API answers with an HTTP error: ``status`` and an error ``kind`` in the API's own words.

    ``retry`` tells the client whether trying again may help (clients that honour the hint retry or
    give up at once).
    """

    status: int = 400
    message: str = "scripted failure"
    kind: str = "invalid_request_error"
    retry: bool = False
    delay: float = 0.0


@attrs.frozen(kw_only=True)
class Respond:
    """A turn decided when its request arrives: ``fn(conversation)`` returns a turn or plain text."""

    fn: Callable[[Conversation], Any]


@attrs.frozen(kw_only=True, eq=False)
class Hold:
    """Answer with ``then`` only once ``gate`` is set: a test controls exactly how long the agent stays
    busy. A gate still closed after ``timeout`` seconds is a problem the server reports (HTTP 500)."""

    gate: threading.Event
    then: Any
    timeout: float = 60.0


Turn = Answer | Failure | Respond | Hold


# -- helpers the servers share ---------------------------------------------------------------------


def offers_tools(conversation: Conversation) -> bool:
    """The default test for a model turn: requests without tools are CLIs' side requests (titles...)."""
    return bool(conversation.tools)


def estimate_tokens(value: Any) -> int:
    """Roughly four characters a token: clients only use it to show context use."""
    return max(1, len(json.dumps(value)) // 4)


def split_text(text: str, pieces: int) -> list[str]:
    """``text`` cut into about ``pieces`` chunks, for streaming it as several deltas."""
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i:i + size] for i in range(0, len(text), size)]


def reply(text: str, *, delay: float = 0.0) -> Answer:
    """The model answers with ``text``."""
    return Answer(text=text, delay=delay)


def call_tool(
    name: str, arguments: Mapping[str, Any] | None = None, *, text: str = "", call_id: str | None = None,
    delay: float = 0.0,
) -> Answer:
    """The model calls tool ``name`` with ``arguments`` (after saying ``text``, if any)."""
    call = ToolCall(name=name, arguments=arguments or {}) if call_id is None else ToolCall(
        name=name, arguments=arguments or {}, call_id=call_id)
    return Answer(text=text, tool_calls=(call,), delay=delay)


def think(seconds: float, then: Answer | str) -> Answer:
    """The model works ``seconds`` before answering with ``then``."""
    answer = reply(then) if isinstance(then, str) else then
    return attrs.evolve(answer, delay=answer.delay + seconds)


def respond(fn: Callable[[Conversation], Any]) -> Respond:
    """A turn computed from the conversation when its request arrives."""
    return Respond(fn=fn)


def hold(gate: threading.Event, then: Any, *, timeout: float = 60.0) -> Hold:
    """A turn answered with ``then`` once ``gate`` is set."""
    return Hold(gate=gate, then=then, timeout=timeout)


def fail(status: int = 400, message: str = "scripted failure", *, kind: str = "invalid_request_error",
         retry: bool = False) -> Failure:
    """The API answers with an HTTP error (``retry``: hint that trying again may help)."""
    return Failure(status=status, message=message, kind=kind, retry=retry)


class ScriptError(AssertionError):
    """A script was used wrongly: a bad turn, or requests the script had no turn for."""


def resolve(turn: Any, conversation: Conversation) -> Answer | Failure:
    """Turn whatever a script holds into a concrete answer, waiting on holds and calling functions."""
    for _ in range(100):
        if isinstance(turn, str):
            return reply(turn)
        if isinstance(turn, Answer | Failure):
            return turn
        if isinstance(turn, Respond):
            turn = turn.fn(conversation)
        elif isinstance(turn, Hold):
            if not turn.gate.wait(turn.timeout):
                raise ScriptError(f"a held turn's gate was not set within {turn.timeout:g} s")
            turn = turn.then
        else:
            raise ScriptError(f"not a turn: {turn!r} (use reply, call_tool, think, respond, hold or fail)")
    raise ScriptError("respond() functions returned other functions 100 times in a row")


class Script:
    """The model's turns, served in order (thread-safe; more may be added while it runs).

    ``side`` answers requests the server classifies as side requests (default: a short fixed text).
    When the turns run out each further request is answered with :data:`EXHAUSTED_TEXT` and
    recorded in :attr:`problems`; :meth:`assert_done` fails the test then.
    """

    def __init__(self, *turns: Any, side: Any = "OK") -> None:
        self._lock = threading.Lock()
        self._turns: list[Any] = []
        self.side = side
        self.served = 0
        self.problems: list[str] = []
        self.add(*turns)

    def add(self, *turns: Any) -> None:
        """Append turns (checked now, so a typo fails where it was written)."""
        for turn in turns:
            if not isinstance(turn, str | Answer | Failure | Respond | Hold):
                raise ScriptError(f"not a turn: {turn!r} (use reply, call_tool, think, respond, hold "
                                  "or fail)")
        with self._lock:
            self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._turns)

    def next_turn(self, conversation: Conversation) -> Answer | Failure:
        """The answer to one agent request (consumes a turn)."""
        with self._lock:
            turn = self._turns.pop(0) if self._turns else None
            self.served += 1
            if turn is None:
                self.problems.append(f"request {self.served} came after the script ran out "
                                     f"(last user text: {conversation.last_user_text[:200]!r})")
        if turn is None:
            return reply(EXHAUSTED_TEXT)
        return resolve(turn, conversation)

    def side_turn(self, conversation: Conversation) -> Answer | Failure:
        """The answer to a side request (consumes nothing)."""
        return resolve(self.side, conversation)

    def assert_done(self) -> None:
        """Fail unless every turn was used and no request came after the end."""
        with self._lock:
            left, problems = len(self._turns), list(self.problems)
        if problems:
            raise ScriptError("; ".join(problems))
        if left:
            raise ScriptError(f"{left} scripted turn(s) were never requested")


# -- recording -------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class RecordedRequest:
    """One request a server received, and how it was answered.

    ``kind`` is ``turn`` (consumed a scripted turn), ``side`` (a side request), or another word the
    server chose for endpoints outside the conversation (``count_tokens``, ``other``...).
    """

    method: str
    path: str
    query: Mapping[str, str] = attrs.field(factory=dict, converter=_mapping)
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_mapping)
    body: Any = None
    kind: str = "other"
    conversation: Conversation | None = None
    answer: Answer | Failure | None = None
    status: int = 200
    at: float = 0.0


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's signature
        pass  # requests are recorded, not logged to stderr

    def _dispatch(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parsed = urllib.parse.urlsplit(self.path)
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        request = Incoming(
            method=self.command, path=parsed.path,
            query=dict(urllib.parse.parse_qsl(parsed.query)),
            headers={k.lower(): v for k, v in self.headers.items()}, body=body, handler=self,
        )
        try:
            owner.handle(request)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - report it to the test, answer the agent
            owner.problems.append(f"{self.command} {parsed.path}: {type(exc).__name__}: {exc}")
            if not request.started:
                request.send_json(500, {"error": f"scripted server failed: {exc}"})
            else:
                self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _dispatch


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A CLI that hangs up mid-stream (an interrupted turn) is normal, not a server fault.
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


@attrs.define(kw_only=True, eq=False)
class Incoming:
    """A request being answered; subclasses of :class:`ScriptedServer` reply through it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    handler: _Handler
    started: bool = False
    status: int = 200

    def send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        """A complete JSON response."""
        data = json.dumps(payload).encode()
        self.started, self.status = True, status
        h = self.handler
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        if self.method != "HEAD":
            h.wfile.write(data)
        h.wfile.flush()

    def start_events(self, headers: Mapping[str, str] | None = None) -> None:
        """Begin a server-sent-events stream (chunked, so the connection can be reused afterwards)."""
        self.started = True
        h = self.handler
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.flush()

    def send_event(self, event: str | None, data: Any) -> None:
        """One server-sent event; ``data`` is sent as JSON unless it is already a string."""
        text = data if isinstance(data, str) else json.dumps(data)
        lines = "".join(f"data: {line}\n" for line in text.split("\n"))
        frame = (f"event: {event}\n" if event else "") + lines
        self._chunk((frame + "\n").encode())

    def send_comment(self, text: str = "keep-alive") -> None:
        """An SSE comment line: keeps an idle stream open without meaning anything."""
        self._chunk(f": {text}\n\n".encode())

    def end_events(self) -> None:
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        w = self.handler.wfile
        w.write(b"%x\r\n%s\r\n" % (len(data), data))
        w.flush()


class ScriptedServer:
    """A model API on 127.0.0.1 (port chosen by the system), served from a thread.

    Subclasses implement :meth:`handle` for their wire format and call :meth:`record` once per
    request. Use as a context manager, or call :meth:`start` and :meth:`close`. ``problems`` collects
    anything that went wrong inside the server (a test calls :meth:`assert_healthy`).
    """

    def __init__(self, script: Script | None = None, *, host: str = "127.0.0.1") -> None:
        self.script = script if script is not None else Script()
        self.host = host
        self.problems: list[str] = []
        self._requests: list[RecordedRequest] = []
        self._arrivals: list[str] = []
        self._lock = threading.Condition()
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> ScriptedServer:
        if self._server is not None:
            return self
        server = _HTTPServer((self.host, 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"{type(self).__name__}-{server.server_address[1]}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not running (call start())")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to give the agent CLI (no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    # recording

    def handle(self, request: Incoming) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def arrived(self, kind: str) -> None:
        """Note that a request of ``kind`` arrived (called before answering, which may take long)."""
        with self._lock:
            self._arrivals.append(kind)
            self._lock.notify_all()

    def wait_for_arrivals(self, count: int, kind: str = "turn", timeout: float = 10.0) -> None:
        """Wait until ``count`` requests of ``kind`` have arrived, answered or not (a held turn counts)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while (seen := self._arrivals.count(kind)) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"{seen} of {count} {kind} requests arrived within {timeout:g} s")
                self._lock.wait(remaining)

    def record(self, request: Incoming, *, kind: str, conversation: Conversation | None = None,
               answer: Answer | Failure | None = None, status: int | None = None) -> None:
        """Record one request (``status``: the one being sent, default the request's so far).

        Call it before the response's last byte is written, so that a client which has read its
        whole answer always finds the request recorded.
        """
        entry = RecordedRequest(
            method=request.method, path=request.path, query=request.query, headers=request.headers,
            body=request.body, kind=kind, conversation=conversation, answer=answer,
            status=request.status if status is None else status, at=time.time(),
        )
        with self._lock:
            self._requests.append(entry)
            self._lock.notify_all()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def turns(self) -> list[RecordedRequest]:
        """The requests that consumed scripted turns."""
        return [r for r in self.requests if r.kind == "turn"]

    def wait_for(self, predicate: Callable[[RecordedRequest], bool],
                 timeout: float = 10.0) -> RecordedRequest:
        """The first recorded request matching ``predicate``, waiting up to ``timeout`` seconds for it."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for entry in self._requests:
                    if predicate(entry):
                        return entry
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [f"{r.method} {r.path} ({r.kind})" for r in self._requests]
                    raise AssertionError(f"no matching request within {timeout:g} s; received: {seen}")
                self._lock.wait(remaining)

    def wait_for_turns(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait until ``count`` scripted turns have been requested and answered; return them."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                turns = [r for r in self._requests if r.kind == "turn"]
                if len(turns) >= count:
                    return turns
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"{len(turns)} of {count} scripted turns answered "
                                         f"within {timeout:g} s")
                self._lock.wait(remaining)

    def assert_healthy(self) -> None:
        """Fail if the server hit an internal error or the script was misused."""
        if self.problems:
            raise ScriptError("; ".join(self.problems))
        if self.script.problems:
            raise ScriptError("; ".join(self.script.problems))

    def reply_json(self, request: Incoming, status: int, payload: Any, *, kind: str,
                   conversation: Conversation | None = None, answer: Answer | Failure | None = None,
                   headers: Mapping[str, str] | None = None) -> None:
        """Record the request, then answer it with JSON: recorded before the last byte goes out, so a
        client that has its answer always finds the request recorded."""
        request.status = status
        self.record(request, kind=kind, conversation=conversation, answer=answer)
        request.send_json(status, payload, headers=headers)

    def take_turn(self, conversation: Conversation,
                  is_turn: Callable[[Conversation], bool]) -> tuple[str, Answer | Failure]:
        """Whether the request is the agent's own ``turn`` (``is_turn``) or a ``side`` request, noted as
        arrived, and the script's answer to it."""
        kind = "turn" if is_turn(conversation) else "side"
        self.arrived(kind)
        script = self.script
        return kind, script.next_turn(conversation) if kind == "turn" else script.side_turn(conversation)

    def sleep_streaming(self, request: Incoming, seconds: float, keepalive: Callable[[], None]) -> None:
        """Wait ``seconds`` on an open stream, calling ``keepalive`` every second so it stays open."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            time.sleep(min(1.0, remaining))
            if deadline - time.monotonic() > 0:
                keepalive()
