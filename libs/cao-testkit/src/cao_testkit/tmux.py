"""Private tmux servers for tests: each test gets its own socket, never the user's tmux server.

- ``private_tmux_socket()``: context manager yielding a :class:`PrivateTmux` (socket in a fresh
  short temporary folder, ``TMUX_TMPDIR`` pointed there, ``TMUX``/``TMUX_PANE`` removed). On exit it
  checks that the server it is about to kill listens on that private socket, ends every program in its
  panes the way cao-tmux ends a terminal's, kills the server, waits for it to be gone and restores the
  environment.
- ``private_tmux``: the same as a pytest fixture; it also sets ``CAO_TMUX_SOCKET`` and
  ``CAO_TMUX_CONFIG`` so a ``Kernel`` built in the test uses the private server.

- :class:`PaneWatch`: notes when a text first shows in any pane of a tmux server, looked for from a
  thread of the test's own (what a person watching the screen would see, whatever cao makes of it).

The server is started with no configuration file (``-f`` the null device), so the user's
``~/.tmux.conf`` cannot change what a test sees. tmux must be installed: a test that needs it fails
with a clear message rather than being skipped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Self

import pytest

_CLIENT_VARS = ("TMUX", "TMUX_PANE", "TMUX_TMPDIR")
#: The folders of every private server this process made: what their panes ran names them.
made_folders: list[str] = []


@dataclasses.dataclass(frozen=True)
class PrivateTmux:
    """A tmux server reachable only through ``socket_path`` (it starts on first use)."""

    socket_path: str
    tmpdir: str
    binary: str
    config_file: str = os.devnull

    @property
    def settings(self) -> dict[str, str]:
        """cao settings that point a backend or kernel at this server."""
        return {"CAO_TMUX_SOCKET": self.socket_path, "CAO_TMUX_CONFIG": self.config_file}

    def argv(self, *args: str) -> list[str]:
        return [self.binary, "-f", self.config_file, "-S", self.socket_path, *args]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run one tmux command on this server (``check``: raise with tmux's message on failure)."""
        done = subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=30, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done

    def server_pid(self) -> int | None:
        """The server's pid, or None when no server is running on the socket."""
        done = self.run("display-message", "-p", "#{pid}", check=False)
        return int(done.stdout) if done.returncode == 0 and done.stdout.strip().isdigit() else None

    def kill_server(self) -> None:
        """Kill this server and every program in its panes, after checking it is ours; wait until it is
        gone."""
        if not self.socket_path.startswith(self.tmpdir + os.sep):
            raise AssertionError(
                f"refusing to kill a tmux server outside the private folder: {self.socket_path}"
            )
        pid = self.server_pid()
        if pid is None:
            return
        done = self.run("display-message", "-p", "#{socket_path}", check=False)
        answered = done.stdout.strip()
        if done.returncode == 0 and os.path.realpath(answered) != os.path.realpath(self.socket_path):
            raise AssertionError(
                f"server answering on {self.socket_path} reports socket {answered}; not killing it"
            )
        self.end_programs()
        self.run("kill-server", check=False)
        _wait_gone(pid, timeout=10.0)

    def end_programs(self) -> None:
        """End every session's programs through cao-tmux's own kill (process trees, sessions, anything
        carrying a terminal's ``CAO_TERMINAL_ID``; SIGTERM, then SIGKILL).

        ``kill-server`` alone only hangs up the panes: an agent CLI that ignores SIGHUP, or a program
        that left the pane's process group, would outlive the test.
        """
        from cao_hookspecs.errors import InvalidInput
        from cao_tmux.backend import TmuxBackend

        listed = self.run("list-sessions", "-F", "#{session_name}", check=False)
        if listed.returncode != 0:
            return
        backend = TmuxBackend(home_dir=self.tmpdir, socket_path=self.socket_path, config_file=self.config_file)
        try:
            for name in listed.stdout.splitlines():
                with contextlib.suppress(InvalidInput):  # a name cao cannot spell: kill-server must do
                    backend.kill_session(name)
        finally:
            backend.close()


def _wait_gone(pid: int, timeout: float) -> None:
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, ProcessLookupError, OSError):
        fd = None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if fd is not None:
                import select

                if select.select([fd], [], [], deadline - time.monotonic())[0]:
                    return
            elif not os.path.exists(f"/proc/{pid}"):
                return
            else:
                time.sleep(0.01)
    finally:
        if fd is not None:
            os.close(fd)
    raise AssertionError(f"tmux server {pid} still running {timeout:g} s after kill-server")


class PaneWatch:
    """While the ``with`` block runs, look every 20 ms at every pane of the tmux server at ``socket``;
    ``seen_at`` is the ``time.monotonic()`` at which ``sign`` first showed (None until it does)."""

    def __init__(self, socket: str, sign: str) -> None:
        self.socket, self.sign = socket, sign
        self.seen_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pane-watch", daemon=True)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=False)
        return done.stdout

    def _run(self) -> None:
        while not self._stop.is_set() and self.seen_at is None:
            for pane in self._tmux("list-panes", "-a", "-F", "#{pane_id}").split():
                if self.sign in self._tmux("capture-pane", "-p", "-t", pane):
                    self.seen_at = time.monotonic()
                    return
            time.sleep(0.02)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def find_tmux() -> str:
    binary = shutil.which("tmux")
    if binary is None:
        raise AssertionError(
            "tmux is not installed: these tests need a real tmux (e.g. apt-get install tmux)"
        )
    return binary


@contextlib.contextmanager
def private_tmux_socket() -> Iterator[PrivateTmux]:
    """A private tmux socket for the duration of the block; the server is killed on exit."""
    binary = find_tmux()
    # Short on purpose: a unix socket path must fit in about 100 bytes.
    tmpdir = os.path.realpath(tempfile.mkdtemp(prefix="cao-tmux-"))
    made_folders.append(tmpdir)
    saved = {name: os.environ.get(name) for name in _CLIENT_VARS}
    os.environ["TMUX_TMPDIR"] = tmpdir
    os.environ.pop("TMUX", None)
    os.environ.pop("TMUX_PANE", None)
    tmux = PrivateTmux(socket_path=os.path.join(tmpdir, "sock"), tmpdir=tmpdir, binary=binary)
    try:
        yield tmux
    finally:
        try:
            tmux.kill_server()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            shutil.rmtree(tmpdir, ignore_errors=True)


@pytest.fixture
def private_tmux(monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateTmux]:
    """A private tmux server for one test; ``CAO_TMUX_SOCKET``/``CAO_TMUX_CONFIG`` point at it."""
    monkeypatch.delenv("CAO_TMUX_SOCKET_NAME", raising=False)
    with private_tmux_socket() as tmux:
        for name, value in tmux.settings.items():
            monkeypatch.setenv(name, value)
        yield tmux


@pytest.fixture
def tmux_socket() -> Iterator[str]:
    """The socket path of a private tmux server for one test (killed afterwards), for tests that hand it
    to a kernel as ``CAO_TMUX_SOCKET``."""
    with private_tmux_socket() as tmux:
        yield tmux.socket_path
