"""Fixtures for the tmux backend tests: a backend on a private tmux server, launches, event recorders."""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cao_hookspecs import OutputEvent, RuntimeContext, TerminalLaunch

from cao_testkit import waiting
from cao_testkit.processes import pid_alive
from cao_testkit.tmux import PrivateTmux, private_tmux  # noqa: F401  (fixture)

PROGRAMS = Path(__file__).parent / "programs"
PYTHON = sys.executable


class Recorder:
    """An ``on_event`` callback that keeps every event and lets a test wait for the one it expects."""

    def __init__(self) -> None:
        self.events: list[tuple[float, OutputEvent]] = []
        self._cond = threading.Condition()

    def __call__(self, event: OutputEvent) -> None:
        with self._cond:
            self.events.append((time.monotonic(), event))
            self._cond.notify_all()

    def kinds(self) -> list[str]:
        with self._cond:
            return [e.kind for _, e in self.events]

    def output(self) -> bytes:
        with self._cond:
            return b"".join(e.data for _, e in self.events if e.kind == "output")

    def wait(self, predicate: Callable[[], Any], timeout: float = 5.0, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                result = predicate()
                if result:
                    return result
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"timed out after {timeout} s waiting for {what}; got {self.events!r}"
                    )
                self._cond.wait(left)

    def wait_output(self, needle: bytes, timeout: float = 5.0) -> float:
        """Wait until ``needle`` appeared in the output; return when (monotonic) it arrived."""

        def seen() -> float | None:
            data = b""
            for at, event in self.events:
                data += event.data
                if needle in data:
                    return at
            return None

        return self.wait(seen, timeout, f"output {needle!r}")

    def wait_kind(self, kind: str, timeout: float = 5.0) -> OutputEvent:
        return self.wait(
            lambda: next((e for _, e in self.events if e.kind == kind), None), timeout, f"a {kind!r} event"
        )


@pytest.fixture
def recorder() -> type[Recorder]:
    return Recorder


@pytest.fixture
def make_backend(private_tmux: PrivateTmux, cao_home: Path) -> Iterator[Callable[..., Any]]:  # noqa: F811
    """Build backends through the plugin's factory, as the kernel does; all closed at teardown."""
    from cao_tmux import plugin

    made = []

    def make(home: Path | None = None, **settings: str) -> Any:
        spec = plugin.cao_register_backends()[0]
        ctx = RuntimeContext(home_dir=str(home or cao_home), settings={**private_tmux.settings, **settings})
        backend = spec.factory(ctx)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()


@pytest.fixture
def backend(make_backend: Callable[..., Any]) -> Any:
    return make_backend()


@pytest.fixture
def launch(tmp_path: Path) -> Callable[..., TerminalLaunch]:
    """``launch(argv, **fields)``: a TerminalLaunch with a fresh terminal id and sensible defaults."""

    def make(argv: list[str], **fields: Any) -> TerminalLaunch:
        tid = fields.pop("terminal_id", None) or secrets.token_hex(4)
        env = {"CAO_TERMINAL_ID": tid, **fields.pop("env", {})}
        values: dict[str, Any] = {
            "terminal_id": tid,
            "session_name": "cao-test",
            "window_name": f"agent-{tid[:4]}",
            "working_directory": str(tmp_path),
            "argv": argv,
            "env": env,
            "width": 100,
            "height": 30,
        }
        values.update(fields)
        return TerminalLaunch(**values)

    return make


@pytest.fixture
def start(backend: Any, launch: Callable[..., TerminalLaunch],
          recorder: type[Recorder]) -> Callable[..., tuple[TerminalLaunch, Recorder]]:
    """``start(argv, **fields) -> (spec, events)``: create a terminal running ``argv`` on ``backend`` and
    watch it, every event going to ``events``, a fresh recorder."""

    def start_(argv: list[str], **fields: Any) -> tuple[TerminalLaunch, Recorder]:
        spec = launch(argv, **fields)
        backend.create_terminal(spec)
        events = recorder()
        backend.watch(spec.terminal_id, events)
        return spec, events

    return start_


def probe_argv(log: Path, *, bracketed: bool = False) -> list[str]:
    return [PYTHON, str(PROGRAMS / "probe.py"), str(log), *(["--bracketed"] if bracketed else [])]


@pytest.fixture
def probe() -> Callable[..., list[str]]:
    """``probe(log_path, bracketed=False)``: argv of the raw-mode input-logging test agent."""
    return probe_argv


@pytest.fixture
def python() -> str:
    return PYTHON


@pytest.fixture
def alive() -> Callable[[int], bool]:
    return pid_alive


@pytest.fixture
def wait_until() -> Callable[..., Any]:
    """``wait_until(predicate, timeout=5, what='')``: poll briefly (test side only) until true."""
    return waiting.wait_until


@pytest.fixture
def fifo_files(cao_home: Path) -> Callable[[], list[str]]:
    return lambda: (
        sorted(os.listdir(cao_home / "runtime" / "fifos"))
        if (cao_home / "runtime" / "fifos").exists()
        else []
    )


class PtyClient:
    """A program run under a pseudo-terminal of ``rows`` x ``cols``, as a person's terminal would run a
    tmux client; a thread keeps reading what it draws (``screen``), so it never blocks on a full PTY."""

    def __init__(self, argv: list[str], rows: int = 24, cols: int = 80) -> None:
        import pty
        import subprocess

        self.master, slave = pty.openpty()
        self._set_size(rows, cols)
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        env["TERM"] = "xterm-256color"
        try:
            self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                         start_new_session=True)
        finally:
            os.close(slave)
        self._drawn: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self._drawn.append(chunk)

    def _set_size(self, rows: int, cols: int) -> None:
        import fcntl
        import struct
        import termios

        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    @property
    def screen(self) -> bytes:
        return b"".join(self._drawn)

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def resize(self, rows: int, cols: int) -> None:
        import signal

        self._set_size(rows, cols)
        # The client has no controlling terminal to be told by: say it as the terminal would.
        os.killpg(self.proc.pid, signal.SIGWINCH)

    def close(self) -> None:
        """End the program and what it started (SIGTERM to its process group, then SIGKILL), and the
        terminal."""
        import signal
        import subprocess

        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(3)
        with contextlib.suppress(OSError):
            os.close(self.master)
        self._reader.join(3)


@pytest.fixture
def pty_client() -> Iterator[Callable[..., PtyClient]]:
    """``pty_client(argv, rows=24, cols=80)``: run ``argv`` under a PTY; ended after the test."""
    made: list[PtyClient] = []

    def make(argv: list[str], rows: int = 24, cols: int = 80) -> PtyClient:
        made.append(client := PtyClient(argv, rows, cols))
        return client

    yield make
    for client in made:
        client.close()
