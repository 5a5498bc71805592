"""Fixtures for the console's tests: a real ``cao server`` with mock agents on a private tmux server,
the settings ``cao console`` reads to reach it, a fake server with fixed data for the screen snapshot,
and ``drive``/``until`` to run the app under Textual's pilot."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

# Textual reads these once, when it is imported: a developer's own setting must not change what the
# tests see. Animations off makes every frame final.
for _name in [n for n in os.environ if n.startswith("TEXTUAL_")]:
    del os.environ[_name]
os.environ["TEXTUAL_ANIMATIONS"] = "none"

PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "mcp")
SIZE = (140, 34)
# A mock agent that asks before each command its task names (`run: <command>`): a real prompt to answer.
CAREFUL = """---
name: careful
description: Asks before it runs a command
mockBehaviour: permission
---
You ask before you run anything.
"""


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A ``cao server`` subprocess (token required, as users run it) on a private home and tmux server,
    with ``settings`` (what ``cao console`` reads to reach it) and ``workdir``; stopped after the
    module's tests."""
    from cao_testkit.server_process import server_env, start_cao_server
    from cao_testkit.tmux import private_tmux_socket

    home = tmp_path_factory.mktemp("console-home")
    (home / "agent-store").mkdir()
    (home / "agent-store" / "careful.md").write_text(CAREFUL, encoding="utf-8")
    workdir = tmp_path_factory.mktemp("console-work")
    with private_tmux_socket() as tmux:
        server = start_cao_server(home, workdir, server_env(home, tmux, PLUGINS))
        try:
            port = server.url.rsplit(":", 1)[1]
            server.settings = {"CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": port, "CAO_HOME_DIR": str(home),
                               **tmux.settings}
            server.workdir = str(workdir)
            server.tmux = tmux
            yield server
        finally:
            server.close()


async def until(pilot: Any, predicate: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    """Let the app run until ``predicate()`` is truthy; its value, or a failure naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await pilot.pause(0.02)


def drive(app: Any, scenario: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run ``app`` headless at a fixed size and ``scenario(pilot)`` against it (no pytest-asyncio:
    one event loop per test)."""

    async def main() -> Any:
        async with app.run_test(size=SIZE) as pilot:
            return await scenario(pilot)

    return asyncio.run(main())


def plain(app: Any, selector: str) -> str:
    """The text a ``Static`` shows."""
    return app.query_one(selector).content.plain


def tree_text(app: Any) -> str:
    """Every row of the team tree, one per line."""
    from textual.widgets import Tree

    tree = app.query_one(Tree)
    rows = []

    def walk(node: Any) -> None:
        for child in node.children:
            rows.append(child.label.plain)
            walk(child)

    walk(tree.root)
    return "\n".join(rows)


@pytest.fixture
def helpers() -> Any:
    """``until``, ``drive``, ``plain`` and ``tree_text`` (test modules cannot import each other)."""
    import types

    return types.SimpleNamespace(until=until, drive=drive, plain=plain, tree_text=tree_text)


# -- a fake server with fixed data ------------------------------------------------------------------

T0 = 1_767_268_800.0  # 2026-01-01 12:00:00 UTC

TEAM = {
    "at": T0 + 300,
    "sessions": [
        {"name": "cao-demo", "status": "detached", "working_directory": "/work/demo", "terminals": [
            {"id": "a1b2c3d4", "name": "supervisor-1a2b", "session_name": "cao-demo",
             "provider": "claude_code", "agent_profile": "supervisor", "working_directory": "/work/demo",
             "caller_id": None,
             "created_at": "2026-01-01T12:00:00+00:00", "status": "processing", "evidence": "spinner row",
             "since": T0 + 10, "pending_messages": 0, "delegation": None,
             "waiting_for": [{"kind": "handoff", "worker_id": "e5f6a7b8", "since": T0 + 20}]},
            {"id": "e5f6a7b8", "name": "developer-3c4d", "session_name": "cao-demo", "provider": "codex",
             "agent_profile": "developer", "working_directory": "/work/demo", "caller_id": "a1b2c3d4",
             "created_at": "2026-01-01T12:00:20+00:00", "status": "waiting_user_answer",
             "evidence": "codex: approval prompt", "since": T0 + 95, "pending_messages": 2,
             "delegation": {"kind": "handoff", "caller_id": "a1b2c3d4", "started_at": T0 + 20},
             "waiting_for": [{"kind": "messages", "count": 2}, {"kind": "prompt", "since": T0 + 95}],
             "prompt": {"id": "e5f6a7b8-1", "terminal_id": "e5f6a7b8",
                        "opened_at": "2026-01-01T12:01:35+00:00",
                        "prompt": {"kind": "permission", "question": "Allow writing to /work/demo/setup.py?",
                                   "title": "Edit file", "tool": "Write",
                                   "arguments": {"file_path": "/work/demo/setup.py"},
                                   "options": [{"label": "Yes", "keys": ["1"], "effect": "allow"},
                                               {"label": "No, and tell Codex what to do", "keys": ["2"],
                                                "effect": "deny", "takes_text": True}],
                                   "default": 1}}},
            {"id": "0c0d0e0f", "name": "reviewer-5e6f", "session_name": "cao-demo", "provider": "mock_cli",
             "agent_profile": "reviewer", "working_directory": "/work/demo", "caller_id": "a1b2c3d4",
             "created_at": "2026-01-01T12:00:30+00:00", "status": "completed", "evidence": "answer shown",
             "since": T0 + 60, "pending_messages": 0,
             "delegation": {"kind": "assign", "caller_id": "a1b2c3d4", "started_at": T0 + 30},
             "waiting_for": []},
        ]},
        {"name": "cao-docs", "status": "detached", "working_directory": "/work/docs", "terminals": [
            {"id": "99887766", "name": "writer-7a8b", "session_name": "cao-docs", "provider": "gemini_cli",
             "agent_profile": "writer", "caller_id": None, "created_at": "2026-01-01T11:58:00+00:00",
             "status": "error", "evidence": "gemini: quota exceeded", "since": T0 + 120,
             "pending_messages": 0, "delegation": None, "waiting_for": []},
        ]},
    ],
}

SCREEN = ("\x1b[1m╭─ codex ─╮\x1b[0m\n"
          "Ran \x1b[32mpytest -q\x1b[0m: \x1b[32m42 passed\x1b[0m\n"
          "\x1b[33mAllow writing to /work/demo/setup.py?\x1b[0m\n"
          "  1. Yes   2. No, and tell Codex what to do\n")


class FakeServer:
    """What the console asks of a server, answered from fixed data, with every steering call recorded.

    ``events`` sends ``subscribed`` and then waits (for ``push`` to add more, ``end_stream`` to end
    it); ``team`` answers ``snapshots[0]``, then the next one at each call if more are given.
    """

    url = "http://127.0.0.1:9889"
    local = True

    def __init__(self, snapshots: list[dict[str, Any]] | None = None) -> None:
        self.snapshots = list(snapshots or [TEAM])
        self.calls: list[tuple[str, ...]] = []
        self.queue: asyncio.Queue[dict[str, Any] | None] | None = None
        self.subscriptions = 0
        self.stale: set[str] = set()  # prompt ids whose answers are refused, as the server refuses them

    async def aclose(self) -> None:
        self.calls.append(("aclose",))

    async def team(self, session: str | None = None) -> dict[str, Any]:
        self.calls.append(("team",))
        return self.snapshots.pop(0) if len(self.snapshots) > 1 else self.snapshots[0]

    async def events(self, session: str | None = None) -> AsyncIterator[dict[str, Any]]:
        self.subscriptions += 1
        self.queue = asyncio.Queue()
        yield {"event": "subscribed", "at": T0 + 300}
        while (event := await self.queue.get()) is not None:
            yield event

    def push(self, event: dict[str, Any] | None) -> None:
        assert self.queue is not None, "nobody subscribed yet"
        self.queue.put_nowait(event)

    async def pending(self, terminal_id: str) -> list[Any]:
        from cao_hookspecs import Message

        self.calls.append(("pending", terminal_id))
        if terminal_id != "e5f6a7b8":
            return []
        return [
            Message(id=1, sender_id="a1b2c3d4", receiver_id=terminal_id, state="pending", created_at=T0 + 90,
                    body="[bold]not bold[/bold] \x1b[31mnot red\x1b[0m"),
            Message(id=2, sender_id="user", receiver_id=terminal_id, state="pending", created_at=T0 + 91,
                    body="use the fixtures\nfrom conftest.py"),
        ]

    async def screen(self, terminal_id: str) -> str:
        self.calls.append(("screen", terminal_id))
        return SCREEN

    async def send(self, terminal_id: str, text: str) -> None:
        self.calls.append(("send", terminal_id, text))

    async def answer(self, terminal_id: str, text: str) -> None:
        self.calls.append(("answer", terminal_id, text))

    async def answer_prompt(self, terminal_id: str, prompt_id: str, *, option: int | None = None,
                            text: str | None = None) -> None:
        self.calls.append(("answer_prompt", terminal_id, prompt_id, option, text))
        if prompt_id in self.stale:
            from cao_hookspecs.errors import Conflict

            raise Conflict(f"prompt {prompt_id} was answered already")

    async def stop_terminal(self, terminal_id: str) -> None:
        self.calls.append(("stop_terminal", terminal_id))

    async def stop_session(self, session_name: str) -> None:
        self.calls.append(("stop_session", session_name))

    async def attach_argv(self, member: Any) -> list[str]:
        return ["tmux", "attach-session", "-t", f"{member.session_name}:{member.name}"]


@pytest.fixture
def fake() -> type[FakeServer]:
    """The ``FakeServer`` class (instantiate with the snapshots ``team`` answers in turn)."""
    return FakeServer


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Times of day shown in UTC, whatever the machine's zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()

