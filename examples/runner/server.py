"""A cao-server of the example's own: a real ``cao server --port 0`` process with a private home folder
and a private tmux server, so an example never touches the user's sessions, profiles or tmux."""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LISTENING_RE = re.compile(r"cao-server listening on http://(?P<host>[^\s:]+|\[[^\]]+\]):(?P<port>\d+)")
START_TIMEOUT = 60.0


def cao_command() -> list[str]:
    """The ``cao`` of the running Python environment (never whatever ``cao`` is first on PATH)."""
    script = Path(sys.executable).parent / "cao"
    return [str(script)] if script.exists() else [sys.executable, "-m", "cao_kernel"]


class PrivateServer:
    """Start with :meth:`start`, stop with :meth:`stop` (also on errors: use it as a context manager).

    :param home: cao home folder; default a fresh temporary one, removed at the end.
    :param tmux_socket: tmux socket path; default one in a fresh temporary folder, whose tmux server is
        killed at the end (a given one is left running).
    :param extra_env: more environment for the server (and so for every agent it starts).
    """

    def __init__(self, *, home: str | None = None, tmux_socket: str | None = None,
                 extra_env: dict[str, str] | None = None) -> None:
        # Short on purpose: a unix socket path must fit in about 100 bytes.
        self.scratch = tempfile.mkdtemp(prefix="cao-ex-")
        self.home = home or os.path.join(self.scratch, "home")
        self.tmux_socket = tmux_socket or os.path.join(self.scratch, "tmux.sock")
        # Only a tmux server of our own is killed at the end; a given socket may serve other sessions.
        self.own_tmux = tmux_socket is None
        self.log_path = os.path.join(self.scratch, "server.log")
        self.extra_env = dict(extra_env or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.host = ""
        self.port = 0
        self.console: str | None = None
        self._unread = b""

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def env(self) -> dict[str, str]:
        """The environment for ``cao`` commands that talk to this server."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CAO_", "TMUX"))}
        env.update({"CAO_HOME_DIR": self.home, "CAO_TMUX_SOCKET": self.tmux_socket, "CAO_TMUX_CONFIG": os.devnull,
                    **self.extra_env})
        if self.port:
            env.update({"CAO_API_HOST": self.host, "CAO_API_PORT": str(self.port)})
        return env

    def start(self) -> PrivateServer:
        os.makedirs(self.home, exist_ok=True)
        log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed with the process
        try:
            self.proc = subprocess.Popen(
                [*cao_command(), "server", "--port", "0", "--log-level", os.environ.get("EXAMPLE_SERVER_LOG", "warning")], env=self.env(),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, start_new_session=True,
            )
        finally:
            log.close()
        line = self._read_line(START_TIMEOUT)
        match = LISTENING_RE.search(line)
        if match is None:
            self.stop()
            raise RuntimeError(f"cao-server did not start: it printed {line!r}; its log:\n{self.log()}")
        self.host, self.port = match["host"], int(match["port"])
        # `cao server` prints a one-time login link for its web console on the next line, when it has one.
        following = self._read_line(0.5)
        self.console = following.split()[1] if following.startswith("Console: ") else None
        return self

    def _read_line(self, timeout: float) -> str:
        # From the pipe's file descriptor, not a buffered reader: a reader takes both lines `cao server`
        # prints at once, and a wait on the descriptor then never sees the second.
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._unread:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return f"(nothing within {timeout:g} s)"
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                self._unread += chunk
        line, _, self._unread = self._unread.partition(b"\n")
        return line.decode("utf-8", "replace")

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(encoding="utf-8")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server, then the private tmux server (and so every agent left), then clean up."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.own_tmux and os.path.exists(self.tmux_socket) and shutil.which("tmux"):
            subprocess.run(["tmux", "-S", self.tmux_socket, "kill-server"], capture_output=True, check=False)
        _remove_when_free(self.scratch)

    def __enter__(self) -> PrivateServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _remove_when_free(folder: str) -> None:
    # Agents' MCP servers may still be writing their logs for a moment after tmux is gone.
    for _ in range(20):
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.exists(folder):
            return
        time.sleep(0.05)


class RunningServer:
    """A cao-server someone already runs (``cao server``): the example's team runs there, so that server's
    web console shows it as it works. Only the example's session is removed at the end; the server, its
    other sessions and its tmux server stay. The example's profiles are installed into the server's home.

    :param url: the server's address (``http://127.0.0.1:9889``).
    :param home: the cao home the server uses (for its API token and profiles); default the usual one.
    """

    own_tmux = False
    tmux_socket = "(the server's own)"
    console = None

    def __init__(self, url: str, *, home: str | None = None) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not a cao-server address: {url!r} (expected http://HOST:PORT)")
        self.host, self.port = parts.hostname, parts.port or 9889
        self.home = home or os.environ.get("CAO_HOME_DIR") or ""
        self.scratch = tempfile.mkdtemp(prefix="cao-ex-")

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
        env.update({"CAO_API_HOST": self.host, "CAO_API_PORT": str(self.port)})
        if self.home:
            env["CAO_HOME_DIR"] = self.home
        return env

    def start(self) -> RunningServer:
        done = subprocess.run([*cao_command(), "info"], env=self.env(), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=30, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"no cao-server answers at {self.url}: {(done.stderr or done.stdout).strip()}")
        return self

    def log(self) -> str:
        return ""

    def stop(self) -> None:
        _remove_when_free(self.scratch)

    def __enter__(self) -> RunningServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
