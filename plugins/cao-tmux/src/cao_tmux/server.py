"""One tmux server (a socket path, a socket name, or the default server), driven through libtmux.

libtmux's ``Server`` runs every command; this module adds what cao needs on top: several commands in
one invocation, tmux's refusals turned into cao's errors, the version check, and the one command
libtmux cannot send (a paste buffer loaded from stdin).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from .errors import TmuxError, TmuxNotRunning, TmuxTargetMissing
from .quoting import command_chain

if TYPE_CHECKING:
    import libtmux

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
    _libtmux: libtmux.Server | None = attrs.field(init=False, default=None)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock)

    def describe(self) -> str:
        """Where the server is, for error messages."""
        if self.socket_path:
            return f"tmux server at socket {self.socket_path}"
        if self.socket_name:
            return f"tmux server with socket name {self.socket_name!r}"
        return "default tmux server"

    def libtmux(self) -> libtmux.Server:
        """libtmux's handle on this server, made once tmux is known to be installed and recent enough."""
        if self._libtmux is None:
            with self._lock:
                if self._libtmux is None:
                    binary = _find_tmux(self._binary_name)
                    # libtmux is imported here, not with the module: `cao --help` never pays for it.
                    import libtmux

                    self._libtmux = libtmux.Server(
                        socket_path=self.socket_path,
                        socket_name=self.socket_name,
                        config_file=self.config_file,
                        tmux_bin=binary,
                    )
        return self._libtmux

    def binary(self) -> str:
        """The tmux program this server is driven with (found and version-checked on first use)."""
        return str(self.libtmux().tmux_bin)

    def run(self, *commands: Sequence[str], input: bytes | None = None, timeout: float | None = None) -> str:
        """Run ``commands`` (each an argument list) in one tmux invocation and return what they printed.

        Raises :class:`TmuxNotRunning` when no server answers, :class:`TmuxTargetMissing` when a named
        session/window/pane does not exist, :class:`TmuxError` for any other refusal. tmux stops at the
        first failing command, so the commands after it did not run. ``input`` goes to tmux's stdin
        (``load-buffer -``), within ``timeout`` seconds.
        """
        if self._socket_missing(commands):
            # A server at an explicit socket path listens on that file: without it no server can answer,
            # and asking would cost a tmux process (plus the version check before the first one). A
            # fresh cao-server asks twice before its first answer.
            raise TmuxNotRunning(
                f"{self.describe()} is not running (no socket file)",
                command=[self._binary_name, "-S", str(self.socket_path)],
            )
        chain = command_chain(commands)
        server = self.libtmux()
        if input is None:
            try:
                done = server.cmd(*chain)
            except OSError as exc:
                raise TmuxError(f"could not run tmux: {exc}", command=chain) from None
            # libtmux drops the empty lines at the end: a caller that must count a screen's empty bottom
            # rows ends its commands with a marker line (TmuxBackend.capture).
            returncode, argv = done.returncode, done.cmd
            stdout = "".join(line + "\n" for line in done.stdout)
            stderr = "\n".join(done.stderr)
        else:
            returncode, argv, stdout, stderr = self._run_with_input(chain, input, timeout or self.timeout)
        if returncode == 0:
            return stdout
        first = (stderr.splitlines() or [f"exit status {returncode}"])[0]
        lowered = stderr.lower()
        if any(mark in lowered for mark in _SERVER_GONE):
            raise TmuxNotRunning(
                f"{self.describe()} is not running ({first})", command=argv, stderr=stderr, stdout=stdout
            )
        kind = TmuxTargetMissing if any(mark in lowered for mark in _TARGET_GONE) else TmuxError
        raise kind(
            f"tmux refused {_name_of(commands)}: {first}", command=argv, stderr=stderr, stdout=stdout
        )

    def _run_with_input(self, chain: list[str], data: bytes, timeout: float) -> tuple[int, list[str], str, str]:
        """libtmux's commands take no stdin: this one invocation feeds ``data`` to tmux itself, with the
        server options libtmux would add."""
        server = self.libtmux()
        argv = [str(server.tmux_bin)]
        if self.config_file is not None:
            argv += ["-f", self.config_file]
        if self.socket_path:
            argv += ["-S", self.socket_path]
        elif self.socket_name:
            argv += ["-L", self.socket_name]
        argv += chain
        try:
            done = subprocess.run(argv, input=data, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise TmuxError(f"{self.describe()} did not answer within {exc.timeout:g} s", command=argv) from None
        except OSError as exc:
            raise TmuxError(f"could not run tmux: {exc}", command=argv) from None
        out, err = (stream.decode("utf-8", "replace") for stream in (done.stdout, done.stderr))
        return done.returncode, argv, out, err.strip()

    def socket_absent(self) -> bool:
        """Whether the server has an explicit socket path and no file is there (so none is running).
        The default server's socket depends on ``TMUX``, ``TMUX_TMPDIR`` and how tmux was built: only
        tmux knows. A missing tmux still counts as unknown, so that the next command reports it."""
        return bool(self.socket_path) and not os.path.exists(self.socket_path) and (
            shutil.which(self._binary_name) is not None
        )

    def _socket_missing(self, commands: Sequence[Sequence[str]]) -> bool:
        """Whether ``commands`` only query a server that cannot be running."""
        return all(command and command[0] in _QUERIES for command in commands) and self.socket_absent()


def _name_of(commands: Sequence[Sequence[str]]) -> str:
    names = [c[0] for c in commands if c]
    return names[0] if len(names) == 1 else "the command sequence " + " ; ".join(names)


def _find_tmux(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise TmuxError(
            f"tmux is not installed: {name!r} was not found on PATH; install tmux "
            f"{'.'.join(map(str, MIN_VERSION))} or newer (e.g. 'apt-get install tmux' or 'brew install tmux')"
        )
    from libtmux.common import get_version_str
    from libtmux.exc import LibTmuxException

    try:
        # libtmux asks `tmux -V` once per binary and remembers the answer.
        version = get_version_str(tmux_bin=path)
    except LibTmuxException:
        version = ""  # a build that cannot say its version is taken as new enough, as tmux master is
    except OSError as exc:
        raise TmuxError(f"could not run {path} -V: {exc}") from None
    found = parse_version(version)
    if found is not None and found < MIN_VERSION:
        raise TmuxError(
            f"tmux {version} at {path} is too old: cao needs tmux {'.'.join(map(str, MIN_VERSION))} or newer"
        )
    return path


def parse_version(text: str) -> tuple[int, int] | None:
    """``"tmux 3.3a"`` -> ``(3, 3)``; development builds (``tmux master``, ``next-3.6``) give their number
    when they have one, else None (treated as new enough)."""
    match = re.search(r"(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None
