"""The terminal WebSocket, end to end: a real cao-server on 127.0.0.1, mock agents on a private tmux server,
and a WebSocket client speaking upstream CAO's frames."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess

import httpx
import pytest
from cao_server.api_token import ensure_token
from cao_testkit.processes import open_ptys
from cao_testkit.serve import serve_in_thread
from cao_testkit.waiting import wait_until
from cao_tmux import viewer as tmux_viewer
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

pytestmark = pytest.mark.tmux

REPLY = b"> MOCK: hi"


class Console:
    """The server, its token, and what a test does with them."""

    def __init__(self, server, token, tmux, workdir):
        self.server, self.tmux, self.workdir = server, tmux, workdir
        self.headers = {"Authorization": f"Bearer {token}"}
        self.http = httpx.Client(base_url=server.url, headers=self.headers, timeout=30)

    def agent(self, session="web", **params):
        """A new mock agent (in a new session, or in ``session`` if it exists); its terminal record."""
        body = {"agent_profile": "developer", "working_directory": self.workdir, **params}
        existing = self.http.get(f"/sessions/{session}")
        if existing.status_code == 200:
            created = self.http.post(f"/sessions/cao-{session}/terminals", params=body)
        else:
            created = self.http.post("/sessions", params={"session_name": session, **body})
        assert created.status_code == 201, created.text
        return created.json()

    def socket(self, terminal_id, **kwargs):
        url = self.server.url.replace("http://", "ws://") + f"/terminals/{terminal_id}/ws"
        return connect(url, additional_headers=self.headers, open_timeout=10, **kwargs)

    def pane(self, terminal_id):
        """(pane size, window id) of a terminal, as tmux reports them."""
        out = self.tmux.run("list-panes", "-a", "-F", "#{@cao_id} #{pane_width}x#{pane_height} #{window_id}")
        for line in out.stdout.splitlines():
            tid, size, window = line.split()
            if tid == terminal_id:
                return size, window
        raise AssertionError(f"no pane for terminal {terminal_id}")

    def viewer_sessions(self):
        out = self.tmux.run("list-sessions", "-F", "#{session_name}", check=False).stdout
        return [name for name in out.split() if name.startswith(tmux_viewer.PREFIX)]

    def viewer_processes(self):
        """Processes of this server's viewers: their command lines name a viewer session and the socket."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    command = f.read()
            except OSError:
                continue
            if tmux_viewer.PREFIX.encode() in command and self.tmux.socket_path.encode() in command:
                found.append(int(pid))
        return found

    def close(self):
        self.http.close()


@pytest.fixture
def console(make_kernel, cao_home, private_tmux, workdir):
    kernel = make_kernel("tmux", "mock_cli", "inbox_sqlite", "mcp", "web")
    token = ensure_token(cao_home)
    with serve_in_thread(kernel, token=token) as server:
        console = Console(server, token, private_tmux, workdir)
        try:
            yield console
            # No viewer outlives its socket, whatever the test did.
            wait_until(lambda: not console.viewer_processes(), timeout=10, what="every viewer to end")
            assert console.viewer_sessions() == []
        finally:
            console.close()


def read_until(socket, needle, timeout=10.0):
    """What the socket sent until ``needle`` showed up; every frame binary and at most 64 KiB."""
    import time

    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        frame = socket.recv(timeout=max(deadline - time.monotonic(), 0.01))
        assert isinstance(frame, bytes), f"a text frame from the server: {frame!r}"
        assert len(frame) <= 64 * 1024
        seen += frame
    return seen


def attached(socket):
    """Wait for the viewer's first drawing: it is attached."""
    assert isinstance(socket.recv(timeout=10), bytes)


def closed_with(socket, timeout=10.0):
    """The close frame the server sent (code, reason), reading whatever came before it."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            socket.recv(timeout=timeout)
    assert closed.value.rcvd is not None, "the connection dropped without a close frame"
    return closed.value.rcvd.code, closed.value.rcvd.reason


def test_upstream_frames_type_into_the_agent_and_carry_its_reply(console):
    tid = console.agent()["id"]
    with console.socket(tid) as socket:
        socket.send(json.dumps({"type": "resize", "rows": 30, "cols": 100}))  # what upstream's page sends first
        socket.send(json.dumps({"type": "input", "data": "hi\r"}))
        read_until(socket, REPLY)
    assert "> MOCK: hi" in console.http.get(f"/terminals/{tid}/output").json()["output"]


def test_resize_changes_the_pane_as_tmux_reports_it(console):
    tid = console.agent()["id"]
    with console.socket(tid) as socket:
        attached(socket)
        wait_until(lambda: console.pane(tid)[0] == "80x24", what="the first size, 24 x 80")
        socket.send(json.dumps({"type": "resize", "rows": 40, "cols": 120}))
        wait_until(lambda: console.pane(tid)[0] == "120x40", what="the pane at 120 x 40")
        # A size no screen has is cut down, not passed on to tmux.
        socket.send(json.dumps({"type": "resize", "rows": 30, "cols": 10**12}))
        wait_until(lambda: console.pane(tid)[0] == "1000x30", what="the pane at 1000 x 30")


def test_closing_the_socket_ends_the_viewer_and_leaves_the_agent(console):
    tid = console.agent()["id"]
    ptys = open_ptys()
    with console.socket(tid) as socket:
        socket.send(json.dumps({"type": "resize", "rows": 40, "cols": 120}))
        wait_until(lambda: console.pane(tid)[0] == "120x40", what="the viewer's size")
        assert console.viewer_processes() and console.viewer_sessions()
        assert open_ptys() == ptys + 1

    wait_until(lambda: not console.viewer_processes(), what="the viewer's processes to end")
    assert console.viewer_sessions() == []
    wait_until(lambda: open_ptys() == ptys, what="the PTY to be closed")
    # The agent runs on, in the size it was launched with, and answers.
    wait_until(lambda: console.pane(tid)[0] == "220x50", what="the launch size back")
    assert console.http.post(f"/terminals/{tid}/input", params={"message": "hi"}).status_code == 200
    wait_until(lambda: "> MOCK: hi" in console.http.get(f"/terminals/{tid}/output").json()["output"],
               what="the agent's reply")


def test_another_tmux_client_keeps_its_window(console):
    first = console.agent()
    second = console.agent()
    _, first_window = console.pane(first["id"])
    # A person's tmux client on the session, looking at the first agent (control mode: no terminal needed).
    person = subprocess.Popen(
        [*console.tmux.argv("-C", "attach-session", "-t", f"={first['session_name']}")],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        console.tmux.run("select-window", "-t", first_window)

        def person_window():
            out = console.tmux.run("list-clients", "-F", "#{client_control_mode} #{window_id}").stdout
            return [line.split()[1] for line in out.splitlines() if line.startswith("1 ")]

        wait_until(lambda: person_window() == [first_window], what="the person's client")
        with console.socket(second["id"]) as socket:
            socket.send(json.dumps({"type": "input", "data": "hi\r"}))
            read_until(socket, REPLY)
            assert person_window() == [first_window]
        assert person_window() == [first_window]
    finally:
        person.stdin.close()
        person.wait(10)


@pytest.mark.parametrize(("terminal_id", "code"), [("0badc0de", 4004), ("not-an-id", 4003)])
def test_a_bad_terminal_is_refused_with_a_reason(console, terminal_id, code):
    with console.socket(terminal_id) as socket:
        refused, reason = closed_with(socket)
    assert refused == code and terminal_id in reason


def test_the_socket_wants_the_token(console):
    url = console.server.url.replace("http://", "ws://") + "/terminals/0badc0de/ws"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, open_timeout=10)
    assert refused.value.response.status_code == 403


def test_malformed_frames_change_nothing(console):
    tid = console.agent()["id"]
    with console.socket(tid) as socket:
        for frame in ["not json", "[]", "null", '{"type": "input"}', '{"type": "input", "data": 5}',
                      '{"type": "resize", "rows": "40", "cols": 120}', '{"type": "resize", "rows": 0, "cols": -1}',
                      '{"type": "resize", "rows": true, "cols": 120}', '{"type": "resize", "rows": 1e400}',
                      '{"type": "launch", "data": "rm -rf /"}', "[" * 60000, '{"rows": ' + "9" * 5000 + "}",
                      b"\x00\xff binary"]:
            socket.send(frame)
        socket.send('{"type": "input", "data": "\\ud800"}')  # a lone surrogate: typed as '?'
        socket.send(json.dumps({"type": "input", "data": "\rhi\r"}))
        read_until(socket, REPLY)
        assert console.pane(tid)[0] == "80x24"  # no resize was taken


def test_an_oversized_frame_closes_the_socket_with_a_reason(console):
    tid = console.agent()["id"]
    with console.socket(tid) as socket:
        frame = json.dumps({"type": "input", "data": "x" * (64 * 1024)})
        socket.send(frame)
        code, reason = closed_with(socket)
    assert code == 1009 and f"{len(frame)} characters" in reason
    assert console.http.get(f"/terminals/{tid}").status_code == 200
    assert "x" * 100 not in console.http.get(f"/terminals/{tid}/output").json()["output"]


def test_removing_the_terminal_closes_the_socket_with_a_reason(console):
    other = console.agent()["id"]
    tid = console.agent()["id"]  # the same session: its viewer could move on to the other window
    with console.socket(tid) as socket:
        socket.send(json.dumps({"type": "input", "data": "hi\r"}))
        read_until(socket, REPLY)
        assert console.http.delete(f"/terminals/{tid}").status_code == 200
        code, reason = closed_with(socket)
    assert code == 1000 and tid in reason
    assert console.pane(other)[0] == "220x50", "the other agent's window was shown to the viewer"


def test_removing_the_session_closes_the_socket_with_a_reason(console):
    terminal = console.agent()
    with console.socket(terminal["id"]) as socket:
        attached(socket)
        assert console.http.delete(f"/sessions/{terminal['session_name']}").status_code == 200
        code, reason = closed_with(socket)
    assert code == 1000 and terminal["id"] in reason


def test_a_server_stopping_ends_its_viewers(make_kernel, cao_home, private_tmux, workdir):
    kernel = make_kernel("tmux", "mock_cli", "inbox_sqlite", "mcp", "web")
    token = ensure_token(cao_home)
    with contextlib.ExitStack() as outlives_the_server:
        with serve_in_thread(kernel, token=token) as server:
            console = Console(server, token, private_tmux, workdir)
            outlives_the_server.callback(console.close)
            tid = console.agent()["id"]
            socket = outlives_the_server.enter_context(console.socket(tid))
            socket.send(json.dumps({"type": "input", "data": "hi\r"}))
            read_until(socket, REPLY)
        code, _ = closed_with(socket)
        assert code == 1012  # uvicorn's "service restart": a close frame, not a dropped connection
        assert console.viewer_processes() == [] and console.viewer_sessions() == []
