"""Helpers for running mock_cli as a real process, under pipes or a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import termios
import time
from collections.abc import Iterator

import pytest

from cao_provider_mock.provider import mock_cli_command


def mock_argv(*args: str) -> list[str]:
    """The command the provider launches, with ``args`` appended."""
    return [*mock_cli_command(), *args]


class PtyAgent:
    """mock_cli running with a fresh pseudo-terminal as its stdin, stdout and stderr.

    The test keeps the terminal side open too, to read the terminal's mode while the program runs.
    """

    def __init__(self, *args: str) -> None:
        self.master, self.slave = pty.openpty()
        self.original_mode = termios.tcgetattr(self.slave)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            mock_argv(*args), stdin=self.slave, stdout=self.slave, stderr=self.slave,
            start_new_session=True, close_fds=True,
        )
        self.output = bytearray()
        self._seen = 0

    def mode(self) -> list:
        return termios.tcgetattr(self.slave)

    def _pump(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        self.output += os.read(self.master, 65536)
        return True

    def expect(self, marker: bytes, timeout: float = 5.0) -> bytes:
        """Wait for ``marker`` in output not consumed yet; return the output up to and including it."""
        deadline = time.monotonic() + timeout
        while True:
            index = self.output.find(marker, self._seen)
            if index >= 0:
                chunk = bytes(self.output[self._seen:index + len(marker)])
                self._seen = index + len(marker)
                return chunk
            # A pty hands output over asynchronously: bytes may still arrive after the program exited.
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                unread = bytes(self.output[self._seen:])
                raise AssertionError(f"{marker!r} not seen within {timeout}s; unread output: {unread!r}")
            self._pump(remaining)

    def quiet(self, seconds: float) -> bytes:
        """Collect whatever arrives during ``seconds`` (and consume it)."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            self._pump(remaining)
        chunk = bytes(self.output[self._seen:])
        self._seen = len(self.output)
        return chunk

    def send(self, data: bytes) -> None:
        """Write all of ``data``, reading output meanwhile so neither side of the terminal fills up."""
        view = memoryview(data)
        while view:
            readable, writable, _ = select.select([self.master], [self.master], [], 5)
            if not (readable or writable):
                raise AssertionError("terminal neither readable nor writable for 5 s")
            if readable:
                self.output += os.read(self.master, 65536)
            if writable:
                view = view[os.write(self.master, view[:4096]):]

    def wait(self, timeout: float = 5.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.02)
        return self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def spawn_pty() -> Iterator:
    """``spawn_pty(*args)`` starts mock_cli under a pseudo-terminal; every one is killed at teardown."""
    agents: list[PtyAgent] = []

    def spawn(*args: str) -> PtyAgent:
        agent = PtyAgent(*args)
        agents.append(agent)
        return agent

    yield spawn
    for agent in agents:
        agent.close()


def _run_piped(stdin: bytes, *args: str, timeout: float = 10.0) -> subprocess.CompletedProcess:
    return subprocess.run(mock_argv(*args), input=stdin, capture_output=True, timeout=timeout, check=False)


@pytest.fixture
def run_piped():
    """``run_piped(stdin_bytes, *args)`` runs mock_cli with pipes (non-terminal mode) to the end of stdin."""
    return _run_piped


@pytest.fixture(name="mock_argv")
def mock_argv_fixture():
    """``mock_argv(*args)``: the command the provider launches, with ``args`` appended."""
    return mock_argv
