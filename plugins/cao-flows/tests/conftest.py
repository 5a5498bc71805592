"""Fixtures for the flows' tests: kernels with mock agents and the flows plugin on private tmux servers,
a fake clock for the scheduler, and flow files written into the test's folder."""

from __future__ import annotations

import asyncio
import datetime as dt
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server", "flows")
#: A fixed moment to start fake clocks at: 30 s past a minute.
T0 = dt.datetime(2026, 3, 2, 10, 0, 30, tzinfo=dt.UTC).timestamp()


class FakeClock:
    """The scheduler's clock and sleep: time moves only when the test says."""

    def __init__(self, at: float = T0) -> None:
        self.at = at
        self._moved = asyncio.Event()

    def now(self) -> float:
        return self.at

    async def sleep(self, seconds: float, poke: asyncio.Event) -> None:
        wake = self.at + seconds
        while self.at < wake and not poke.is_set():
            moved = asyncio.ensure_future(self._moved.wait())
            poked = asyncio.ensure_future(poke.wait())
            await asyncio.wait({moved, poked}, return_when=asyncio.FIRST_COMPLETED)
            moved.cancel()
            poked.cancel()

    def advance_to(self, at: float) -> None:
        self.at = at
        self._moved.set()
        self._moved = asyncio.Event()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def flow_file(tmp_path: Path) -> Callable[..., Path]:
    """``flow_file(name, schedule="* * * * *", body="...", **frontmatter)``: a flow file in the test's
    folder for the mock agent's ``developer`` profile."""

    def write(name: str = "daily", schedule: str = "* * * * *", body: str = "Say hello.",
              **meta: Any) -> Path:
        fields = {"name": name, "schedule": schedule, "agent_profile": "developer", "provider": "mock_cli",
                  **meta}
        front = "".join(f"{key}: {value!r}\n" if isinstance(value, str) else f"{key}: {value}\n"
                        for key, value in fields.items())
        path = tmp_path / f"{name}.flow.md"
        path.write_text(f"---\n{front}---\n{textwrap.dedent(body).strip()}\n", encoding="utf-8")
        return path

    return write


@pytest.fixture
def flows_kernel(tmux_socket: str, cao_home: Path) -> Callable[..., Any]:
    """``flows_kernel(home=None, socket=None, **settings)``: a kernel (not started) with the flows plugin
    and mock ``developer`` agents."""
    from cao_testkit.kernels import build_kernel

    def make(home: Path | None = None, socket: str | None = None, **settings: str) -> Any:
        return build_kernel(home or cao_home, socket or tmux_socket, *PLUGINS, agents=("developer",),
                            **settings)

    return make
