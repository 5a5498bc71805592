"""``cao-mcp-server`` as a relay: an agent whose terminal cao-server knows is served by the server's own
``/mcp``, through the real script driven with raw JSON-RPC lines over its pipes (no client library), plus
the relay's event-stream decoder on its own."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cao_hookspecs import CreateTerminalRequest
from cao_mcp.relay import SseDecoder, SseEvent, find_server, sse_events
from cao_testkit.server_process import stop_process
from cao_testkit.waiting import wait_until

from .conftest import start_server

MCP_SERVER = str(Path(sys.executable).parent / "cao-mcp-server")
BUILTINS = {"handoff", "assign", "send_message", "delete_terminal", "answer_user_prompt",
            "get_handoff_result"}
HEAVY = ("mcp", "mcp_types", "pydantic", "pydantic_core", "httpx", "httpcore", "anyio", "starlette",
         "uvicorn")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw-test", "version": "0"}}}


class Raw:
    """``cao-mcp-server`` with raw JSON-RPC lines on its pipes; every stdout line must be JSON."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([MCP_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env={"PATH": os.environ.get("PATH", ""), **env})
        self.lines: queue.Queue[Any] = queue.Queue()
        self.stderr: list[str] = []
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._out, daemon=True).start()
        threading.Thread(target=self._err, daemon=True).start()

    def _out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))  # a line that is not JSON fails the reader, then the test
        self.lines.put(None)

    def _err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def send(self, *messages: Any) -> None:
        assert self.proc.stdin is not None
        for message in messages:
            data = message if isinstance(message, bytes) else json.dumps(message).encode()
            self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 30) -> dict[str, Any]:
        message = self.lines.get(timeout=timeout)
        assert message is not None, "cao-mcp-server closed stdout; stderr:\n" + "".join(self.stderr)
        self.seen.append(message)
        return message

    def answer(self, request_id: Any, timeout: float = 30) -> dict[str, Any]:
        """The answer to ``request_id`` (other messages are kept in ``seen``)."""
        for message in self.seen:
            if message.get("id") == request_id and "method" not in message:
                return message
        deadline = time.monotonic() + timeout
        while True:
            message = self.next(max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id and "method" not in message:
                return message

    def initialize(self) -> dict[str, Any]:
        self.send(INITIALIZE)
        answer = self.answer(1)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> str:
        """Close stdin, wait for the exit; returns stderr."""
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return "".join(self.stderr)


@contextlib.contextmanager
def raw(env: dict[str, str]) -> Iterator[Raw]:
    client = Raw(env)
    try:
        yield client
    finally:
        client.close()


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}


def text_of(answer: dict[str, Any]) -> str:
    return "\n".join(item.get("text", "") for item in answer["result"]["content"])


def new_agent(server: Any, mcp: Any) -> str:
    async def make() -> str:
        async with server.client() as api:
            return await mcp.agent(server, api)

    return asyncio.run(make())


@contextlib.contextmanager
def relay_of_new_agent(server: Any, mcp: Any) -> Iterator[Raw]:
    """The relay of a new agent of ``server``, past ``initialize``."""
    with raw(server.mcp_env(new_agent(server, mcp))) as client:
        client.initialize()
        yield client


# -- the relay against a real server ------------------------------------------------------------------

@pytest.mark.tmux
def test_a_known_terminal_is_relayed_without_loading_the_sdk(server: Any, mcp: Any) -> None:
    """The server's own tools (its plugin tools too) answer, with the caller named by CAO_TERMINAL_ID; the
    process imports none of the heavy libraries on the way."""
    own = new_agent(server, mcp)
    with raw({**server.mcp_env(own), "PYTHONPROFILEIMPORTTIME": "1"}) as client:
        started = time.monotonic()
        info = client.initialize()
        initialized = time.monotonic() - started
        assert info["result"]["serverInfo"]["name"] == "cao-mcp-server"
        client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        names = {tool["name"] for tool in client.answer(2)["result"]["tools"]}
        assert BUILTINS | {"caller_profiles", "echo"} <= names
        client.send(call(3, "caller_profiles", {"prefix": "dev"}))
        answer = client.answer(3)
        assert answer["result"]["isError"] is False
        assert json.loads(text_of(answer)) == {"caller_id": own, "profiles": ["developer"]}
    lines = "".join(client.stderr)
    imported = {m.group(1) for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", lines, re.MULTILINE)}
    assert "cao_mcp.relay" in imported
    assert not {m for m in imported if m.split(".")[0] in HEAVY}, sorted(imported)
    assert initialized < 5, f"initialize took {initialized:.2f} s"


@pytest.mark.tmux
def test_a_blocking_handoff_does_not_stall_other_requests(server: Any, mcp: Any) -> None:
    with relay_of_new_agent(server, mcp) as client:
        # slow_worker answers after 3 s: the handoff blocks at least that long.
        client.send(call(10, "handoff", {"agent_profile": "slow_worker", "message": "take your time"}))
        time.sleep(0.2)
        asked = time.monotonic()
        client.send({"jsonrpc": "2.0", "id": 11, "method": "tools/list"},
                    {"jsonrpc": "2.0", "id": 12, "method": "ping"})
        assert client.answer(11)["result"]["tools"]
        assert client.answer(12)["result"] == {}
        assert time.monotonic() - asked < 2.0
        assert not [m for m in client.seen if m.get("id") == 10], "the handoff answered before the others"
        handoff = client.answer(10)
        assert handoff["result"]["isError"] is False, handoff
        assert handoff["result"]["structuredContent"]["output"] == "take your time"


@pytest.mark.tmux
def test_a_cancelled_request_is_never_answered(server: Any, mcp: Any) -> None:
    with relay_of_new_agent(server, mcp) as client:
        client.send(call(20, "handoff", {"agent_profile": "slow_worker", "message": "never mind"}))
        time.sleep(0.3)
        client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 20, "reason": "the user changed their mind"}})
        client.send({"jsonrpc": "2.0", "id": 21, "method": "ping"})
        assert client.answer(21)["result"] == {}
        # Well past the worker's 3 s answer: still nothing for request 20.
        with pytest.raises(queue.Empty):
            while True:
                message = client.next(timeout=4)
                assert message.get("id") != 20, message


@pytest.mark.tmux
def test_notifications_bad_json_and_invalid_messages(server: Any, mcp: Any) -> None:
    """A notification gets no answer; a line that is not JSON gets a parse error and one that is not a
    message an invalid-request error, both with id null; the relay goes on."""
    with relay_of_new_agent(server, mcp) as client:
        client.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                    b"{this is not json", b"[]", b"42", b"   ",
                    {"jsonrpc": "2.0", "id": 30, "method": "ping"})
        first, second, third = client.next(), client.next(), client.next()
        assert first["id"] is None and first["error"]["code"] == -32700
        assert first["error"]["message"].startswith("Parse error: ")
        assert [second["error"]["code"], third["error"]["code"]] == [-32600, -32600]
        assert client.next() == {"jsonrpc": "2.0", "id": 30, "result": {}}
        client.send({"jsonrpc": "2.0", "id": 31, "method": "no/such/method"})
        assert client.answer(31)["error"]["code"] == -32601
    assert client.proc.returncode == 0


@pytest.mark.tmux
def test_large_messages_pass_whole(server: Any, mcp: Any) -> None:
    own = new_agent(server, mcp)
    receiver = new_agent(server, mcp)
    big = "".join(f"line {n:06d} \u00e9\u6f22\U0001f600 " for n in range(20_000))  # ~0.5 MB, multi-byte
    with raw(server.mcp_env(own)) as client:
        client.initialize()
        client.send(call(40, "echo", {"text": big}))
        echoed = client.answer(40)
        assert echoed["result"]["isError"] is False and text_of(echoed) == big
        client.send(call(41, "send_message", {"receiver_id": receiver, "message": big}))
        sent = client.answer(41)
        assert sent["result"]["isError"] is False, text_of(sent)

    async def stored() -> Any:
        async with server.client() as api:
            return (await api.list_messages(receiver))[0]

    assert asyncio.run(stored()).body.startswith(big)


@pytest.mark.tmux
def test_the_server_dying_mid_way_gets_clear_answers(own_server: Any, mcp: Any) -> None:
    """A handoff in flight when the server dies, and every request after, is answered with the server's
    address; the relay keeps running."""
    doomed = own_server()
    # A handoff waits this long for the server to come back before it is answered.
    with raw(doomed.mcp_env(new_agent(doomed, mcp), CAO_MCP_RESUME_SECONDS="0.5")) as client:
        client.initialize()
        client.send(call(50, "handoff", {"agent_profile": "slow_worker", "message": "x"}))
        time.sleep(0.5)
        doomed.proc.send_signal(signal.SIGKILL)
        doomed.proc.wait(10)
        handoff = client.answer(50)
        where = f"cao-server is not reachable at {doomed.url}"
        assert handoff["result"]["isError"] is True and where in text_of(handoff), handoff
        client.send(call(51, "send_message", {"message": "anyone?"}),
                    {"jsonrpc": "2.0", "id": 52, "method": "tools/list"})
        refused = client.answer(51)
        assert refused["result"]["isError"] is True
        assert f"{where} (connection refused)" in text_of(refused)
        assert "`cao server`" in text_of(refused)
        listed = client.answer(52)
        assert listed["error"]["code"] == -32000 and where in listed["error"]["message"]
        assert client.proc.poll() is None


@pytest.mark.tmux
def test_a_handoff_in_flight_survives_a_server_restart(own_server: Any, mcp: Any) -> None:
    """The server is killed while the worker works and started again on the same address: the relay asks
    again with the call's id, the new server resumes waiting on the same worker, and the agent gets the
    worker's answer as if nothing happened. One worker, its task typed once."""
    first = own_server()
    supervisor = new_agent(first, mcp)
    with raw(first.mcp_env(supervisor)) as client:
        client.initialize()
        client.send(call(60, "handoff", {"agent_profile": "slow_worker", "message": "still here"}))
        worker = asyncio.run(_worker_of(first, supervisor))
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(10)
        second = start_server(first.home, first.workdir, first.plugin_dir, first.tmux, port=first.port)
        try:
            handoff = client.answer(60)
            assert handoff["result"]["isError"] is False, handoff
            data = handoff["result"]["structuredContent"]
            assert data["terminal_id"] == worker and data["output"] == "still here", data
            def removed() -> bool:  # once its answer went back, the worker goes; no other one starts
                remaining = asyncio.run(_workers_of(second, supervisor))
                assert set(remaining) <= {worker}, f"workers started again: {remaining}"
                return not remaining

            wait_until(removed, 10.0, "the handoff's worker was not removed", interval=0.05)
        finally:
            stop_process(second.proc)
    assert "asking again once it is back" in "".join(client.stderr)


async def _workers_of(server: Any, supervisor: str) -> list[str]:
    async with server.client() as api:
        terminals = await api.list_terminals((await api.get_terminal(supervisor)).session_name)
    return [t.id for t in terminals if t.caller_id == supervisor]


async def _worker_of(server: Any, supervisor: str) -> str:
    """The supervisor's one worker, once it is working on its task."""
    from cao_hookspecs import TerminalStatus

    deadline = time.monotonic() + 20
    while not (workers := await _workers_of(server, supervisor)):
        assert time.monotonic() < deadline, "the handoff started no worker"
        await asyncio.sleep(0.05)
    (worker,) = workers
    async with server.client() as api:
        await api.wait_for_status(worker, {TerminalStatus.PROCESSING}, timeout=15)
    return worker


def test_find_server_needs_a_server_that_knows_the_terminal(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = {"CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": str(port), "CAO_HOME_DIR": str(tmp_path)}
    assert find_server(settings, "0badc0de") is None  # nothing listens
    assert find_server({**settings, "CAO_API_PORT": "http"}, "0badc0de") is None
    assert find_server({**settings, "CAO_API_PORT": "70000"}, "0badc0de") is None
    assert find_server(settings, "NOT-HEX") is None


# -- the event-stream decoder ----------------------------------------------------------------------

_line_text = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=20)
_event = st.tuples(
    st.lists(_line_text, min_size=1, max_size=4),  # data lines
    st.one_of(st.none(), _line_text.filter(bool)),  # event type
    st.one_of(st.none(), _line_text.filter(lambda s: "\0" not in s)),  # id
    st.one_of(st.none(), _line_text),  # a comment
)


def _serialize(events: list[Any], endings: list[str]) -> tuple[bytes, list[SseEvent]]:
    lines: list[str] = []
    expected: list[SseEvent] = []
    last_id = None
    for data, kind, event_id, comment in events:
        if comment is not None:
            lines.append(f":{comment}")
        if kind is not None:
            lines.append(f"event: {kind}")
        if event_id is not None:
            lines.append(f"id: {event_id}")
            last_id = event_id
        lines.extend(f"data: {value}" for value in data)
        lines.append("")
        expected.append(SseEvent("\n".join(data), kind or "message", last_id))
    text, previous = "", ""
    for n, line in enumerate(lines):
        ending = endings[n % len(endings)]
        if previous == "\r" and not line and ending == "\n":
            ending = "\r\n"  # CR then an empty line ended by LF would read as one CR LF
        text += line + ending
        previous = ending
    return text.encode("utf-8"), expected


@given(st.lists(_event, max_size=6), st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=5),
       st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=10), st.booleans())
@example([(["{\"jsonrpc\": \"2.0\"}"], None, None, None)], ["\r\n"], [1], True)
def test_sse_decoder_reads_any_chunking_and_line_endings(events: list[Any], endings: list[str],
                                                         sizes: list[int], bom: bool) -> None:
    body, expected = _serialize(events, endings)
    if bom:
        body = "\ufeff".encode() + body
    chunks, at, n = [], 0, 0
    while at < len(body):
        size = sizes[n % len(sizes)]
        chunks.append(body[at:at + size])
        at, n = at + size, n + 1
    assert list(sse_events(chunks)) == expected


@given(st.binary(max_size=300), st.integers(min_value=1, max_value=50))
def test_sse_decoder_never_raises(body: bytes, size: int) -> None:
    decoder = SseDecoder()
    for at in range(0, len(body), size):
        for event in decoder.feed(body[at:at + size]):
            assert isinstance(event.data, str) and event.event


def test_sse_decoder_details() -> None:
    stream = (b"retry: 10\n: a comment\ndata\n\n"  # a field without a colon: an empty data line
              b"data:no space\ndata:  two spaces\nevent: note\n\n"
              b"id: 7\ndata: x\n\nid\ndata: y\n\n"  # an empty id clears it
              b"data: cut off at the end")
    assert list(sse_events([stream])) == [
        SseEvent(""), SseEvent("no space\n two spaces", "note"), SseEvent("x", id="7"), SseEvent("y", id=""),
    ]


@pytest.mark.tmux
def test_a_server_without_an_mcp_endpoint_is_relayed_to_and_says_so(own_server: Any, mcp: Any) -> None:
    """A server that runs without cao-mcp knows the terminal but has no /mcp. Finding that out would cost
    every start a second request, so the process relays anyway (loading no MCP SDK), and each answer
    says what is missing and where to install it."""
    plain = own_server(CAO_LOAD_PLUGINS="tmux,mock_cli,inbox_sqlite,server")

    async def make() -> str:
        # A profile without cao's MCP entry: this server would refuse one that asks for tools it lacks.
        async with plain.client() as api:
            return (await api.create_session(CreateTerminalRequest(
                agent_profile="slow_worker", working_directory=str(plain.workdir)))).id

    own = asyncio.run(make())
    with raw({**plain.mcp_env(own), "PYTHONPROFILEIMPORTTIME": "1"}) as client:
        client.send(INITIALIZE)
        error = client.answer(1)["error"]
        assert error["code"] == -32000
        assert error["message"] == (f"cao-server at {plain.url} does not serve MCP at /mcp (HTTP 404); "
                                    f"install cao-mcp where the server runs")
    imported = "".join(client.stderr)
    assert "cao_mcp.relay" in imported and "mcp.server.mcpserver" not in imported


def test_the_relay_starts_without_the_contract_package(tmp_path: Path) -> None:
    """What the relay loads before it answers ``initialize`` (its module, then ``find_server``, here
    against a port nothing listens on) is the standard library and cao's stdlib-only modules: not
    cao_hookspecs, attrs or pluggy, which would add tens of milliseconds to every agent's start."""
    code = (
        "import sys, cao_mcp.script, cao_mcp.relay as relay\n"
        f"relay.find_server({{'CAO_API_PORT': '{_free_port()}', 'CAO_HOME_DIR': {str(tmp_path)!r}}}, "
        "'0badc0de')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cao_hookspecs', 'attrs', 'pluggy', "
        "'cao_server') and m not in ('cao_server', 'cao_server.settings')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_the_relay_reads_the_token_and_terminal_ids_as_the_server_does(tmp_path: Path) -> None:
    """The relay's restated token reading and terminal-id shape give the contract's and cao-server's
    answers."""
    import re as re_module

    from cao_hookspecs.names import TERMINAL_ID_RE as CONTRACT_TERMINAL_ID_RE
    from cao_mcp import relay, tools, wire
    from cao_server import api_token

    assert wire.TERMINAL_ID_RE.pattern == CONTRACT_TERMINAL_ID_RE.pattern
    assert tools.TERMINAL_ID_RE is wire.TERMINAL_ID_RE and tools.ID_HEADER is wire.ID_HEADER
    assert relay.TOKEN_FILE == api_token.TOKEN_FILE
    assert re_module.compile(relay.TOKEN_PATTERN).pattern == api_token.TOKEN_RE.pattern
    home = tmp_path / "home"
    assert relay._read_token(str(home)) is None is api_token.read_token(home)
    token = api_token.ensure_token(home)
    for text in (token, f"  {token}\n\n", "short", "x" * 43 + "!", "x" * 257, "\u00e9" * 40, ""):
        api_token.token_path(home).write_text(text, encoding="utf-8")
        assert relay._read_token(str(home)) == api_token.read_token(home), text
    api_token.token_path(home).write_bytes(b"\xff" * 40)
    assert relay._read_token(str(home)) is None is api_token.read_token(home)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _ListingServer:
    """A stand-in for cao-server that knows terminal 0123abcd, answers requests to ``/mcp`` with an empty
    result (``prompts/list`` slowly), and logs, in order, each answer it sends and each connection report
    it gets; ``reports`` keeps each report's content type, JSON body and time of arrival.
    ``before_answer[method]`` runs just before the answer to that method goes out."""

    def __init__(self) -> None:
        import http.server

        events = self.events = []
        reports = self.reports = []
        self.before_answer: dict[str, Any] = {}
        lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if self.path == "/terminals/0123abcd":
                    self._json({"id": "0123abcd"})
                else:
                    self.send_error(404)

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.endswith("/mcp-connected"):
                    with lock:
                        reports.append({"content_type": self.headers.get("Content-Type"), "at": time.time(),
                                        "body": json.loads(body) if body else None})
                        events.append(("reported", self.path, self.headers.get("X-CAO-Terminal-Id")))
                    self._json({"success": True})
                    return
                message = json.loads(body)
                if message.get("method") == "prompts/list":
                    time.sleep(0.3)
                if "id" not in message:
                    self.send_response(202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                hook = stub.before_answer.get(message["method"])
                if hook is not None:
                    hook()
                with lock:
                    events.append(("answered", message["method"], self.headers.get("X-CAO-Relay")))
                self._json({"jsonrpc": "2.0", "id": message["id"], "result": {}})

            def _json(self, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def wait_for_report(self, timeout: float = 5) -> list[Any]:
        """The events once a report came (or ``timeout`` passed)."""
        deadline = time.monotonic() + timeout
        while not any(e[0] == "reported" for e in self.events) and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.events)


def _listing_relay(server: _ListingServer, **options: Any) -> tuple[Any, _Written]:
    """A relay to ``server`` and the agent's stdout it writes to."""
    from cao_mcp.relay import Relay, Target

    out = _Written(server, [])
    return Relay(Target(server.url, "0123abcd"), out, **options), out


class _Written:
    """The agent's stdout: each message written is logged in the stub's events (a stream, for ``run``),
    and the time it was written in ``at`` by its id."""

    def __init__(self, server: _ListingServer, written: list[Any]) -> None:
        self.server, self.written = server, written
        self.at: dict[Any, float] = {}
        self.lock = threading.Lock()

    def __call__(self, data: bytes) -> None:
        with self.lock:
            for line in data.splitlines():
                self.written.append(json.loads(line))
                self.at[self.written[-1].get("id")] = time.time()
                self.server.events.append(("written", self.written[-1].get("id")))

    write = __call__

    def flush(self) -> None:
        pass


@contextlib.contextmanager
def _running_relay(server: _ListingServer) -> Iterator[tuple[int, list[Any]]]:
    """``run`` relaying to ``server`` in a thread, its stdin a real pipe; yields the pipe's write end and
    the messages written to the agent. Closing stdin ends it."""
    from cao_mcp.relay import Target, run

    read_end, write_end = os.pipe()
    written: list[Any] = []
    stdin = os.fdopen(read_end, "rb")
    target = Target(server.url, "0123abcd")
    relay = threading.Thread(target=run, args=(target, stdin, _Written(server, written)), daemon=True)
    relay.start()
    try:
        yield write_end, written
    finally:
        os.close(write_end)
        relay.join(10)
        stdin.close()
        assert not relay.is_alive(), "run() did not end with its input"


LISTS = ((1, "tools/list"), (2, "prompts/list"), (3, "resources/list"))


def _lines(*requests: tuple[int, str]) -> list[bytes]:
    return [json.dumps({"jsonrpc": "2.0", "id": n, "method": method}).encode() for n, method in requests]


def _assert_reported_after(events: list[Any], ids: set[int]) -> None:
    """One report, after every list in ``ids`` was handed back."""
    reports = [i for i, e in enumerate(events) if e[0] == "reported"]
    assert len(reports) == 1, events
    assert events[reports[0]][1:] == ("/terminals/0123abcd/mcp-connected", "0123abcd")
    handed_back = {e[1]: i for i, e in enumerate(events) if e[0] == "written"}
    assert ids <= set(handed_back) and max(handed_back[n] for n in ids) < reports[0], events


def test_the_relay_reports_its_agent_connected_after_handing_back_every_list() -> None:
    """An agent CLI counts a server as connected once it has read the answers to the lists it asked for
    together, so the gate must not open (and the task be typed) before the relay hands them back."""
    server = _ListingServer()
    try:
        relay, out = _listing_relay(server)
        threads = relay.handle_lines(_lines(*LISTS))
        assert len(threads) == 3
        for thread in threads:
            thread.join(10)
        events = server.wait_for_report()
        _assert_reported_after(events, {1, 2, 3})
        # The report says when the last list was handed back; nothing else happened here.
        (report,) = server.reports
        assert report["content_type"] == "application/json" and set(report["body"]) == {"listed"}
        assert max(out.at.values()) <= report["body"]["listed"] <= report["at"]
        # Every request tells the server the relay reports in itself.
        assert all(e[2] == "1" for e in events if e[0] == "answered"), events
        # Later list requests report nothing again.
        again = relay.handle_line(b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list"}')
        assert again is not None
        again.join(10)
        time.sleep(0.1)
        assert sum(e[0] == "reported" for e in server.events) == 1
    finally:
        server.close()


def test_the_lists_of_one_write_are_counted_before_any_answer() -> None:
    """``run`` on a real pipe: the three lists arrive in one write; the tool list is answered at once
    and the prompt list 0.3 s later, and the report waits for it."""
    server = _ListingServer()
    try:
        with _running_relay(server) as (stdin, written):
            os.write(stdin, b"".join(line + b"\n" for line in _lines(*LISTS)))
            events = server.wait_for_report()
            _assert_reported_after(events, {1, 2, 3})
            assert sorted(m["id"] for m in written) == [1, 2, 3]
    finally:
        server.close()


def test_no_report_while_input_waits_to_be_read() -> None:
    """The relay has handed back the tool list while the agent's next list waits in its input, not taken
    yet: the report waits until that one is answered too."""
    server = _ListingServer()
    waiting = threading.Event()
    try:
        relay, out = _listing_relay(server, pending_input=waiting.is_set)
        waiting.set()
        (first,) = relay.handle_lines(_lines((1, "tools/list")))
        first.join(10)
        time.sleep(0.2)
        assert [e[0] for e in server.events] == ["answered", "written"], server.events
        relay.handle_lines(_lines((2, "prompts/list")))
        waiting.clear()
        relay.input_taken()
        _assert_reported_after(server.wait_for_report(), {1, 2})
        assert out.at[2] <= server.reports[0]["body"]["listed"] <= server.reports[0]["at"]
    finally:
        server.close()


def test_a_list_written_while_the_tool_list_is_answered_is_waited_for() -> None:
    """``run`` on a real pipe: the agent's second list reaches the pipe just before the first list's answer
    leaves the server, so it cannot have been read yet when that answer is handed back."""
    server = _ListingServer()
    try:
        with _running_relay(server) as (stdin, written):
            first, second = (line + b"\n" for line in _lines((1, "tools/list"), (2, "prompts/list")))
            server.before_answer["tools/list"] = lambda: os.write(stdin, second)
            os.write(stdin, first)
            _assert_reported_after(server.wait_for_report(), {1, 2})
    finally:
        server.close()


def test_the_report_carries_the_start_up_stages(tmp_path: Path) -> None:
    """The real ``cao-mcp-server`` against the stub: its report's body gives, as wall-clock times, when
    the process started, when it read the agent's ``initialize``, when it wrote the answer to it and when
    it wrote the last list's."""
    server = _ListingServer()
    try:
        env = {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_HOST": "127.0.0.1",
               "CAO_API_PORT": server.url.rsplit(":", 1)[1], "CAO_HOME_DIR": str(tmp_path)}
        spawned = time.time()
        with raw(env) as client:
            client.initialize()
            answered = time.time()
            client.send(*({"jsonrpc": "2.0", "id": n, "method": method} for n, method in LISTS))
            for n, _ in LISTS:
                client.answer(n)
            events = server.wait_for_report()
        assert [e[0] for e in events].count("reported") == 1, events
        (report,) = server.reports
        assert report["content_type"] == "application/json"
        stages = report["body"]
        assert list(stages) == ["started", "asked", "initialized", "listed"], stages
        assert spawned <= stages["started"] <= stages["asked"] <= stages["initialized"] <= answered, (
            spawned, stages, answered)
        assert answered <= stages["listed"] <= report["at"], (answered, stages, report)
    finally:
        server.close()


def test_no_report_before_the_tool_list() -> None:
    server = _ListingServer()
    try:
        relay, out = _listing_relay(server)
        thread = relay.handle_line(b'{"jsonrpc": "2.0", "id": 7, "method": "prompts/list"}')
        assert thread is not None
        thread.join(10)
        time.sleep(0.1)
        assert [e for e in server.events if e[0] == "reported"] == [] and out.written[0]["id"] == 7
    finally:
        server.close()


def test_the_reader_hands_over_whole_lines_and_reports_what_it_holds() -> None:
    """``LineReader`` on a real pipe: lines split across writes come out whole, once; input in the pipe,
    part of a line, or a batch not handed over yet counts as pending."""
    from cao_mcp.relay import LineReader

    read_end, write_end = os.pipe()
    try:
        reader = LineReader(read_end)
        assert not reader.pending()
        os.write(write_end, b'{"a": 1}\n{"b"')
        assert reader.pending()
        assert reader.batch() == [b'{"a": 1}']
        assert reader.pending()  # busy until handed over, and half a line held
        reader.handed_over()
        assert reader.pending()
        os.write(write_end, b': 2}\n\n{"c": 3}\n')
        assert reader.batch() == [b'{"b": 2}', b"", b'{"c": 3}']
        reader.handed_over()
        assert not reader.pending()
        os.write(write_end, b'{"d": 4}')
        os.close(write_end)
        write_end = -1
        assert reader.batch() == []
        reader.handed_over()
        assert reader.batch() == [b'{"d": 4}']  # the end of the input ends the last line
        assert reader.batch() is None
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
