"""The Terminal page: the agent's screen in xterm.js over the PTY WebSocket, in upstream's frames (binary
terminal bytes from the server; text JSON input and resize frames from the page); closing the page
closes the socket and leaves the agent running."""

from __future__ import annotations

import json

import pytest

from .conftest import api, start_session

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


def frames_of(page):
    """Every WebSocket the page opens, with the frames it sends and whether it closed."""
    sockets = []

    def opened(socket):
        entry = {"url": socket.url, "sent": [], "received": 0, "closed": False}
        sockets.append(entry)
        socket.on("framesent", lambda payload: entry["sent"].append(payload))
        socket.on("framereceived", lambda payload: entry.__setitem__("received", entry["received"] + 1))
        socket.on("close", lambda _socket: entry.__setitem__("closed", True))

    page.on("websocket", opened)
    return sockets


def screen_text(page):
    return page.locator(".xterm-rows").inner_text()


def test_typing_into_a_worker_shows_its_reply_and_leaving_keeps_it_running(console):
    agent = start_session(console.server, session_name="term-type")
    sockets = frames_of(console.page)
    console.log_in(f"#/terminal/{agent['id']}")
    page = console.page
    page.locator(".xterm-rows").wait_for()
    console.wait(lambda: sockets and sockets[0]["received"] > 0, timeout=15, what="the screen's first bytes")
    assert sockets[0]["url"].endswith(f"/terminals/{agent['id']}/ws")
    first = json.loads(sockets[0]["sent"][0])
    assert first["type"] == "resize" and first["rows"] > 5 and first["cols"] > 20, first

    page.locator(".xterm-helper-textarea").focus()
    page.keyboard.type("hello <b>browser</b>")
    page.keyboard.press("Enter")
    console.wait(lambda: "> MOCK: hello <b>browser</b>" in screen_text(page), timeout=15, what="the reply")
    inputs = [json.loads(f) for f in sockets[0]["sent"] if isinstance(f, str) and '"input"' in f]
    # Keys go as typed (the terminal's own answers to tmux's queries may come between).
    assert "hello <b>browser</b>\r" in "".join(f["data"] for f in inputs)
    assert page.locator(".xterm-rows b").count() == 0  # shown as text, never as markup
    console.screenshot("terminal")

    # A smaller window: the page tells the server the new size.
    page.set_viewport_size({"width": 800, "height": 500})
    def narrower() -> bool:
        last = json.loads(sockets[0]["sent"][-1])
        return last.get("type") == "resize" and last["cols"] < first["cols"]

    console.wait(narrower, what="a resize frame")

    console.open("#/team")
    console.wait(lambda: sockets[0]["closed"], timeout=10, what="the socket closed on leaving")
    with api(console.server) as http:
        status = http.get(f"/terminals/{agent['id']}/status").json()["status"]
        assert status in ("idle", "completed"), status
        http.delete(f"/sessions/{agent['session_name']}")


def test_a_closed_socket_shows_a_banner(console):
    agent = start_session(console.server, session_name="term-banner")
    console.log_in(f"#/terminal/{agent['id']}")
    page = console.page
    page.locator(".xterm-rows").wait_for()
    console.wait(lambda: "\u276f" in page.locator(".xterm-rows").inner_text(), timeout=15, what="the prompt")
    with api(console.server) as http:
        http.delete(f"/sessions/{agent['session_name']}")
    banner = page.get_by_role("status").filter(has_text="connection closed: the terminal was stopped")
    banner.wait_for(timeout=15_000)
    assert banner.get_by_role("button", name="Reconnect").count() == 0
