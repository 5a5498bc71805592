"""Private tmux servers for tests: each test gets its own server, never the user's tmux server.

- ``private_tmux``: a pytest fixture built on libtmux's ``TestServer`` fixture (a server under a
  unique socket name that libtmux kills and unlinks after the test). It sets ``CAO_TMUX_SOCKET`` and
  ``CAO_TMUX_CONFIG`` so a ``Kernel`` built in the test uses that server, and before libtmux's
  teardown it ends every program the server's panes started the way cao-tmux ends a terminal's.
- ``private_tmux_socket()``: the same as a context manager, for fixtures that outlive one test and
  for scripts: a libtmux server under a fresh socket name, killed (programs first) on exit.
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
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Self

import pytest

if TYPE_CHECKING:
    import libtmux

_CLIENT_VARS = ("TMUX", "TMUX_PANE")
#: Every private server's socket and scratch folder: a process naming one of them is a test's.
made_folders: list[str] = []
_OWN_PREFIXES = ("libtmux_test", "cao_test_")


@dataclasses.dataclass(frozen=True)
class PrivateTmux:
    """A tmux server of the test's own (libtmux's handle in ``server``; it starts on first use).

    ``tmpdir`` is a scratch folder that belongs to it (``TMUX_TMPDIR`` for programs the test starts,
    so that not even a stray default-server lookup reaches the user's server).
    """

    server: libtmux.Server
    tmpdir: str
    config_file: str = os.devnull

    @classmethod
    def around(cls, server: libtmux.Server) -> PrivateTmux:
        tmux = cls(server=server, tmpdir=os.path.realpath(tempfile.mkdtemp(prefix="cao-tmux-")))
        made_folders.extend([tmux.tmpdir, tmux.socket_path])
        return tmux

    @property
    def socket_path(self) -> str:
        """Where tmux puts a server started with ``-L name`` (``$TMUX_TMPDIR/tmux-UID/name``)."""
        if self.server.socket_path:
            return str(self.server.socket_path)
        base = os.environ.get("TMUX_TMPDIR") or "/tmp"
        return os.path.join(base, f"tmux-{os.geteuid()}", str(self.server.socket_name))

    @property
    def binary(self) -> str:
        return str(self.server.tmux_bin or find_tmux())

    @property
    def settings(self) -> dict[str, str]:
        """cao settings that point a backend or kernel at this server."""
        return {"CAO_TMUX_SOCKET": self.socket_path, "CAO_TMUX_CONFIG": self.config_file}

    def argv(self, *args: str) -> list[str]:
        """A tmux command line for this server, for a client the test runs itself (``-C attach``)."""
        return [self.binary, "-f", self.config_file, "-S", self.socket_path, *args]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run one tmux command on this server through libtmux (``check``: raise with tmux's message on
        failure); ``stdout`` has one newline-terminated line per line tmux printed."""
        done = self.server.cmd(*args)
        stdout, stderr = "".join(line + "\n" for line in done.stdout), "\n".join(done.stderr)
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {stderr.strip()}")
        return subprocess.CompletedProcess(done.cmd, done.returncode, stdout, stderr)

    def server_pid(self) -> int | None:
        """The server's pid, or None when no server is running on the socket."""
        done = self.run("display-message", "-p", "#{pid}", check=False)
        return int(done.stdout) if done.returncode == 0 and done.stdout.strip().isdigit() else None

    def kill_server(self) -> None:
        """Kill this server and every program in its panes, after checking it is ours; wait until it is
        gone and remove its socket file."""
        if not os.path.basename(self.socket_path).startswith(_OWN_PREFIXES):
            raise AssertionError(f"refusing to kill a tmux server that is not a test's: {self.socket_path}")
        pid = self.server_pid()
        if pid is not None:
            done = self.run("display-message", "-p", "#{socket_path}", check=False)
            answered = done.stdout.strip()
            if done.returncode == 0 and os.path.realpath(answered) != os.path.realpath(self.socket_path):
                raise AssertionError(
                    f"server answering on {self.socket_path} reports socket {answered}; not killing it"
                )
            self.end_programs()
            self.run("kill-server", check=False)
            _wait_gone(pid, timeout=10.0)
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)

    def end_programs(self) -> None:
        """End every session's programs through cao-tmux's own kill (process trees, sessions, anything
        carrying a terminal's ``CAO_TERMINAL_ID``; SIGTERM, then SIGKILL).

        ``kill-server`` alone only hangs up the panes: an agent CLI that ignores SIGHUP, or a program
        that left the pane's process group, would outlive the test.
        """
        from cao_hookspecs.errors import InvalidInput
        from cao_tmux.backend import TmuxBackend

        names = [session.session_name for session in self.server.sessions]
        if not names:
            return
        backend = TmuxBackend(home_dir=self.tmpdir, socket_path=self.socket_path, config_file=self.config_file)
        try:
            for name in names:
                with contextlib.suppress(InvalidInput):  # a name cao cannot spell: kill-server must do
                    backend.kill_session(str(name))
        finally:
            backend.close()

    def remove_scratch(self) -> None:
        shutil.rmtree(self.tmpdir, ignore_errors=True)


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
        import libtmux

        self.server, self.sign = libtmux.Server(socket_path=socket), sign
        self.seen_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pane-watch", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set() and self.seen_at is None:
            try:
                panes = self.server.panes
            except Exception:  # noqa: BLE001 - a window closed while tmux listed it: look again
                panes = []
            for pane in panes:
                with contextlib.suppress(Exception):  # a pane that closed meanwhile
                    if self.sign in "\n".join(pane.capture_pane()):
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
def _client_env() -> Iterator[None]:
    """No ``TMUX``/``TMUX_PANE`` while a private server is in use: a client inside the user's tmux must
    not reach the user's server by default."""
    saved = {name: os.environ.pop(name, None) for name in _CLIENT_VARS}
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is not None:
                os.environ[name] = value


@contextlib.contextmanager
def private_tmux_socket() -> Iterator[PrivateTmux]:
    """A private tmux server for the duration of the block; it is killed (programs first) on exit."""
    import libtmux

    binary = find_tmux()
    with _client_env():
        server = libtmux.Server(socket_name=f"cao_test_{secrets.token_hex(6)}", config_file=os.devnull,
                                tmux_bin=binary)
        tmux = PrivateTmux.around(server)
        try:
            yield tmux
        finally:
            try:
                tmux.kill_server()
            finally:
                tmux.remove_scratch()


@pytest.fixture
def private_tmux(TestServer: Callable[..., libtmux.Server],  # noqa: N803 - libtmux's fixture name
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateTmux]:
    """A private tmux server for one test (libtmux's ``TestServer``); ``CAO_TMUX_SOCKET`` and
    ``CAO_TMUX_CONFIG`` point at it."""
    find_tmux()
    for name in (*_CLIENT_VARS, "CAO_TMUX_SOCKET_NAME"):
        monkeypatch.delenv(name, raising=False)
    tmux = PrivateTmux.around(TestServer(config_file=os.devnull))
    for name, value in tmux.settings.items():
        monkeypatch.setenv(name, value)
    try:
        yield tmux
    finally:
        # libtmux's teardown kills the server afterwards; the programs that would outlive it go first.
        try:
            tmux.end_programs()
        finally:
            tmux.remove_scratch()


@pytest.fixture
def tmux_socket(private_tmux: PrivateTmux) -> str:
    """The socket path of a private tmux server for one test (killed afterwards), for tests that hand it
    to a kernel as ``CAO_TMUX_SOCKET``."""
    return private_tmux.socket_path
