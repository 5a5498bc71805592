"""Running tmux commands against one server (a socket path, a socket name, or the default server)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Sequence

import attrs

from .errors import TmuxError, TmuxNotRunning, TmuxTargetMissing
from .quoting import tmux_arg

MIN_VERSION = (3, 2)

_SERVER_GONE = ("no server running", "error connecting to", "server exited unexpectedly", "lost server")
# Commands that only ask a running server (none of them starts one).
_QUERIES = frozenset({"list-sessions", "list-panes", "list-windows", "display-message", "has-session"})
_TARGET_GONE = ("can't find ", "no such session", "no such window", "no such pane", "session not found")


@attrs.define(kw_only=True, eq=False)
class TmuxServer:
    """One tmux server, addressed like ``tmux -S path`` or ``tmux -L name``.

    ``run`` sends several commands in ONE tmux invocation (``a ; b ; c``): tmux executes them in order
    without handling other events in between, which is what makes window set-up race-free, and it
    costs one process start instead of several. Safe to use from many threads at once.
    """

    socket_path: str | None = None
    socket_name: str | None = None
    config_file: str | None = None
    _binary_name: str = attrs.field(default="tmux", alias="binary")
    timeout: float = 10.0
    _binary: str | None = attrs.field(init=False, default=None)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock)

    def describe(self) -> str:
        """Where the server is, for error messages."""
        if self.socket_path:
            return f"tmux server at socket {self.socket_path}"
        if self.socket_name:
            return f"tmux server with socket name {self.socket_name!r}"
        return "default tmux server"

    def base_argv(self) -> list[str]:
        argv = [self.binary()]
        if self.config_file is not None:
            argv += ["-f", self.config_file]
        if self.socket_path:
            argv += ["-S", self.socket_path]
        elif self.socket_name:
            argv += ["-L", self.socket_name]
        return argv

    def binary(self) -> str:
        """The tmux executable, checked once: installed and recent enough."""
        if self._binary is None:
            with self._lock:
                if self._binary is None:
                    self._binary = _find_tmux(self._binary_name)
        return self._binary

    def run(self, *commands: Sequence[str], input: bytes | None = None, timeout: float | None = None) -> str:
        """Run ``commands`` (each an argument list) in one tmux invocation and return what they printed.

        Raises :class:`TmuxNotRunning` when no server answers, :class:`TmuxTargetMissing` when a named
        session/window/pane does not exist, :class:`TmuxError` for any other refusal. tmux stops at the
        first failing command, so the commands after it did not run.
        """
        if self._socket_missing(commands):
            # A server at an explicit socket path listens on that file: without it no server can answer,
            # and asking would cost a tmux process (plus the version check before the first one). A
            # fresh cao-server asks twice before its first answer.
            raise TmuxNotRunning(
                f"{self.describe()} is not running (no socket file)",
                command=[self._binary_name, "-S", str(self.socket_path)],
            )
        argv = self.base_argv()
        for index, command in enumerate(commands):
            if index:
                argv.append(";")
            argv += [tmux_arg(arg) for arg in command]
        try:
            done = subprocess.run(
                argv,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout or self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise TmuxError(
                f"{self.describe()} did not answer within {exc.timeout:g} s", command=argv
            ) from None
        except OSError as exc:
            raise TmuxError(f"could not run tmux: {exc}", command=argv) from None
        stdout = done.stdout.decode("utf-8", "replace")
        if done.returncode == 0:
            return stdout
        stderr = done.stderr.decode("utf-8", "replace").strip()
        first = (stderr.splitlines() or [f"exit status {done.returncode}"])[0]
        lowered = stderr.lower()
        if any(mark in lowered for mark in _SERVER_GONE):
            raise TmuxNotRunning(
                f"{self.describe()} is not running ({first})", command=argv, stderr=stderr, stdout=stdout
            )
        kind = TmuxTargetMissing if any(mark in lowered for mark in _TARGET_GONE) else TmuxError
        raise kind(
            f"tmux refused {_name_of(commands, stderr)}: {first}", command=argv, stderr=stderr, stdout=stdout
        )

    def _socket_missing(self, commands: Sequence[Sequence[str]]) -> bool:
        """Whether ``commands`` only query and the explicit socket file does not exist. (The default
        server's socket depends on ``TMUX``, ``TMUX_TMPDIR`` and how tmux was built: only tmux knows.)
        A missing tmux is still reported by the first command, as without this shortcut."""
        if not self.socket_path or not all(command and command[0] in _QUERIES for command in commands):
            return False
        return not os.path.exists(self.socket_path) and shutil.which(self._binary_name) is not None


def _name_of(commands: Sequence[Sequence[str]], stderr: str) -> str:
    names = [c[0] for c in commands if c]
    return names[0] if len(names) == 1 else "the command sequence " + " ; ".join(names)


def _find_tmux(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise TmuxError(
            f"tmux is not installed: {name!r} was not found on PATH; install tmux "
            f"{'.'.join(map(str, MIN_VERSION))} or newer (e.g. 'apt-get install tmux' or 'brew install tmux')"
        )
    try:
        out = subprocess.run(
            [path, "-V"], capture_output=True, timeout=10, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TmuxError(f"could not run {path} -V: {exc}") from None
    version = out.stdout.decode("utf-8", "replace").strip()
    found = parse_version(version)
    if found is not None and found < MIN_VERSION:
        raise TmuxError(
            f"{version or path} is too old: cao needs tmux {'.'.join(map(str, MIN_VERSION))} or newer"
        )
    return path


def parse_version(text: str) -> tuple[int, int] | None:
    """``"tmux 3.3a"`` -> ``(3, 3)``; development builds (``tmux master``, ``next-3.6``) give their number
    when they have one, else None (treated as new enough)."""
    match = re.search(r"(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None
