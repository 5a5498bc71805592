"""A real ``cao server --port 0`` subprocess for live tests, on a private home and tmux socket.

Live provider tests start one so that the real agent CLI's ``cao-mcp-server`` has a server to reach.
``run_cao_server`` keeps the test's environment (the live sandbox's HOME, the model server's address)
but drops cao's own variables, except the ones named in ``keep_env`` (such as a provider's binary
override), and loads only ``plugins``. ``run_live_server`` is that for a provider's live tests: the
``live_server_plugins`` of the provider. ``start_cao_server`` (``spawn_cao_server``: without waiting)
starts one on an environment made by ``server_env``, for tests that stop and start servers themselves
(:mod:`cao_testkit.chaos`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tmux import PrivateTmux

__all__ = ["CaoServer", "auth_headers", "home_token", "live_server_plugins", "run_cao_server",
           "run_live_server", "server_env", "spawn_cao_server", "start_cao_server", "stop_process"]

_READY_LINE = re.compile(r"cao-server listening on (http://\S+):(\d+)")
_START_TIMEOUT = 30.0


def live_server_plugins(provider_entry_point: str) -> tuple[str, ...]:
    """What a live test's server loads: the provider under test, the mock agent (the other end of a
    message), and the tmux, SQLite inbox, HTTP and MCP plugins."""
    return ("tmux", provider_entry_point, "mock_cli", "inbox_sqlite", "server", "mcp")


@dataclasses.dataclass
class CaoServer:
    """A ``cao server --port 0`` subprocess on a private home and tmux socket."""

    proc: subprocess.Popen[str]
    url: str
    home: Path
    stderr: list[str]
    pumps: list[threading.Thread] = dataclasses.field(default_factory=list)
    lines: queue.Queue[str] = dataclasses.field(default_factory=queue.Queue)  # its stdout

    def wait_ready(self, timeout: float = _START_TIMEOUT) -> None:
        """Wait until it prints its address (its kernel is up) and set ``url``; raises
        ``AssertionError`` with its stderr when it exits or stays silent for ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self.url and time.monotonic() < deadline and self.proc.poll() is None:
            try:
                found = _READY_LINE.match(self.lines.get(timeout=0.05))
            except queue.Empty:
                continue
            if found:
                self.url = f"{found.group(1)}:{found.group(2)}"
        if not self.url:
            raise AssertionError("cao server did not start:\n" + "\n".join(self.stderr))

    def close(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL) and let go of its output."""
        stop_process(self.proc)
        for pump in self.pumps:
            pump.join(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    @property
    def token(self) -> str | None:
        """The API token the server made in its home (every call but ``/health`` must carry it)."""
        return home_token(self.home)

    @property
    def headers(self) -> dict[str, str]:
        """What a raw HTTP client sends to be let in."""
        return auth_headers(self.home)

    def client(self):  # noqa: ANN201 - cao_server is an optional import here
        """A ``KernelAPI`` over HTTP for this server (use it from one event loop)."""
        from cao_server.client import HttpKernel

        return HttpKernel(self.url, token=self.token)


def home_token(home: str | os.PathLike[str]) -> str | None:
    """The API token in a cao home, once a server has made it."""
    from cao_server.api_token import read_token

    return read_token(home)


def auth_headers(home: str | os.PathLike[str]) -> dict[str, str]:
    """The ``Authorization`` header a raw HTTP client sends to a server on ``home``."""
    token = home_token(home)
    return {"Authorization": f"Bearer {token}"} if token else {}


def stop_process(proc: subprocess.Popen[str]) -> None:
    """Stop a server process: SIGTERM, then SIGKILL when it has not exited within 15 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _pump(stream, sink) -> None:  # noqa: ANN001
    for line in stream:
        sink(line.rstrip("\n"))


def server_env(home: str | os.PathLike[str], tmux: PrivateTmux, plugins: Iterable[str],
               keep_env: Iterable[str] = ()) -> dict[str, str]:
    """The environment of a server on ``home`` and ``tmux``, loading only ``plugins``: the test's own
    without cao's variables, except those named in ``keep_env``."""
    kept = set(keep_env)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAO_") or k in kept}
    env.update({"CAO_HOME_DIR": str(home), "TMUX_TMPDIR": tmux.tmpdir,
                "CAO_LOAD_PLUGINS": ",".join(plugins), **tmux.settings})
    return env


def spawn_cao_server(home: str | os.PathLike[str], cwd: str | os.PathLike[str], env: dict[str, str], *,
                     port: int = 0) -> CaoServer:
    """Spawn ``cao server --port PORT`` and return at once (``url`` is empty until
    :meth:`CaoServer.wait_ready`). The caller stops it with :meth:`CaoServer.close`."""
    cao = Path(sys.executable).parent / "cao"
    # A session of its own: a test can signal the server with whatever it started, as a crash would.
    proc = subprocess.Popen([str(cao), "server", "--port", str(port), "--log-level", "warning"], env=env,
                            cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    server = CaoServer(proc=proc, url="", home=Path(home), stderr=[])
    server.pumps = [threading.Thread(target=_pump, args=(proc.stdout, server.lines.put), daemon=True),
                    threading.Thread(target=_pump, args=(proc.stderr, server.stderr.append), daemon=True)]
    for pump in server.pumps:
        pump.start()
    return server


def start_cao_server(home: str | os.PathLike[str], cwd: str | os.PathLike[str], env: dict[str, str], *,
                     port: int = 0, timeout: float = _START_TIMEOUT) -> CaoServer:
    """Spawn ``cao server --port PORT`` and return it once it prints its address (its kernel is up).

    Raises ``AssertionError`` with the server's stderr when it exits or stays silent for ``timeout``
    seconds (it is stopped first). The caller stops it with :meth:`CaoServer.close`.
    """
    server = spawn_cao_server(home, cwd, env, port=port)
    try:
        server.wait_ready(timeout)
    except BaseException:
        server.close()
        raise
    return server


@contextlib.contextmanager
def run_cao_server(home: str | os.PathLike[str], cwd: str | os.PathLike[str], plugins: Iterable[str],
                   keep_env: Iterable[str] = ()) -> Iterator[CaoServer]:
    """Start the server, yield it once it prints its address, stop it (SIGTERM, then SIGKILL) after.

    Profiles go in ``<home>/agent-store`` (write them before creating terminals).
    """
    from .tmux import private_tmux_socket

    (Path(home) / "agent-store").mkdir(exist_ok=True)
    with private_tmux_socket() as tmux:
        server = start_cao_server(home, cwd, server_env(home, tmux, plugins, keep_env))
        try:
            yield server
        finally:
            server.close()


@contextlib.contextmanager
def run_live_server(home: str | os.PathLike[str], cwd: str | os.PathLike[str], provider_entry_point: str,
                    keep_env: Iterable[str] = ()) -> Iterator[CaoServer]:
    """A server for a provider's live tests: it loads :func:`live_server_plugins` and keeps ``keep_env``
    (the variable naming the installed CLI)."""
    with run_cao_server(home, cwd, live_server_plugins(provider_entry_point), keep_env=keep_env) as server:
        yield server
