"""The Terminal page against a stand-in for the PTY WebSocket (Playwright answers the socket itself):
what the page sends and how it shows what it gets, in upstream's frames, whatever the server side."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import api, start_session

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


class StandIn:
    """The server end of every socket the page opens on ``/terminals/<id>/ws``."""

    def __init__(self, page):
        self.sockets = []
        self.received: list[list[str | bytes]] = []
        page.route_web_socket(re.compile(r"/terminals/[0-9a-f]+/ws$"), self.accept)

    def accept(self, socket):
        frames: list[str | bytes] = []
        self.sockets.append(socket)
        self.received.append(frames)
        socket.on_message(lambda message: frames.append(message))

    def frames(self, index=-1):
        return [json.loads(f) for f in self.received[index] if isinstance(f, str)]


def test_frames_both_ways_and_the_banner_when_the_socket_closes(console):
    agent = start_session(console.server, session_name="term-frames")
    stand_in = StandIn(console.page)
    console.log_in(f"#/terminal/{agent['id']}")
    page = console.page
    page.locator(".xterm-rows").wait_for()
    console.wait(lambda: stand_in.sockets and stand_in.frames(), what="the socket and its first frame")
    first = stand_in.frames()[0]
    assert first["type"] == "resize" and first["rows"] > 5 and first["cols"] > 20, first

    # Raw terminal bytes, escape sequences and all: colours are drawn, markup is text.
    stand_in.sockets[0].send(b"\x1b[31mred\x1b[0m <script>alert(1)</script> caf\xc3\xa9\r\n")
    rows = page.locator(".xterm-rows")
    console.wait(lambda: "red <script>alert(1)</script> caf\u00e9" in rows.inner_text(), timeout=10,
               what="the bytes drawn")
    assert page.locator(".xterm-rows script").count() == 0
    red = rows.locator("span", has_text="red").first
    assert "xterm-fg-1" in (red.get_attribute("class") or "")

    page.locator(".xterm-helper-textarea").focus()
    page.keyboard.type("ls")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+C")
    console.wait(lambda: "".join(f["data"] for f in stand_in.frames() if f["type"] == "input") == "ls\r\x03",
               timeout=10, what="keys as input frames")
    page.set_viewport_size({"width": 700, "height": 480})
    def narrower() -> bool:
        last = stand_in.frames()[-1]
        return last["type"] == "resize" and last["cols"] < first["cols"]

    console.wait(narrower, what="a resize frame")

    # The server ends the socket while the terminal lives on: the page says so and offers to reconnect.
    stand_in.sockets[0].close(code=1011, reason="attach ended")
    banner = page.get_by_role("status").filter(has_text="connection closed")
    banner.wait_for()
    assert "attach ended" in banner.inner_text() and "keeps running" in banner.inner_text()
    banner.get_by_role("button", name="Reconnect").click()
    console.wait(lambda: len(stand_in.sockets) == 2 and stand_in.frames(1), timeout=10, what="a new socket")
    assert stand_in.frames(1)[0]["type"] == "resize"
    assert banner.is_hidden()
    with api(console.server) as http:
        http.delete(f"/sessions/{agent['session_name']}")


def test_leaving_the_page_closes_the_socket(console):
    agent = start_session(console.server, session_name="term-leave")
    closed = []
    stand_in = StandIn(console.page)
    console.log_in(f"#/terminal/{agent['id']}")
    console.wait(lambda: stand_in.sockets and stand_in.frames(), timeout=10, what="the socket")
    stand_in.sockets[0].on_close(lambda code, reason: closed.append((code, reason)))
    console.open("#/team")
    console.wait(lambda: closed, timeout=10, what="the socket closed")
    assert closed[0][0] == 1000
    with api(console.server) as http:
        assert http.get(f"/terminals/{agent['id']}").status_code == 200
        http.delete(f"/sessions/{agent['session_name']}")
