"""The kernel's native signal channel: where agent CLIs' hooks say what the agent is doing.

One UNIX datagram socket per kernel, read by one thread that blocks with no timeout (an idle channel
costs nothing). A hook runs ``signal_send`` (standard library only, by path, with ``-I -S``), which sends
one datagram naming its terminal and event and never waits for an answer. The thread hands each valid
signal to the event loop; there the terminal's provider maps it (``ProviderSpec.native_signal``) to a
``StatusReport``, which the terminal's ``StatusTracker`` prefers over its screen (``status.py`` has the
rules). Malformed datagrams and signals for unknown terminals are dropped.

The socket is ``<cao home>/runtime/signal.sock`` (a folder only the user can enter), so terminals
re-adopted by the next kernel keep reaching it. A second kernel on the same home while the first still
listens takes ``signal-<pid>.sock`` next to it. A home whose path is too long for a socket address
(about 100 bytes) gets a private folder under the system's temporary folder instead, named after the
home. ``CAO_NATIVE_SIGNALS=0`` turns the channel off: terminals are then read from their screens only.
A channel that cannot be opened is logged and the kernel goes on without it.

The terminals service opens the channel when the kernel starts and hands each signal's report to the
terminal's tracker. Providers learn the command to run from the environment of their ``LaunchContext``:
``CAO_SIGNAL_COMMAND`` (a JSON list: the program and its arguments, socket and terminal id included;
append the event name, and the payload when the CLI passes one as an argument) and
``CAO_SIGNAL_SOCKET``. The terminal gets both variables too.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import selectors
import socket
import stat
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from . import signal_send

if TYPE_CHECKING:
    from cao_hookspecs import ProviderSpec, StatusReport

log = logging.getLogger(__name__)

__all__ = ["NativeSignal", "SignalChannel", "open_channel", "report_of"]

SETTING = "CAO_NATIVE_SIGNALS"
SOCKET_NAME = "signal.sock"
# sockaddr_un holds 108 bytes on Linux and 104 on macOS, the terminating NUL included.
MAX_SOCKET_PATH = 100


@attrs.frozen(kw_only=True)
class NativeSignal:
    """One signal as received: ``sent`` is the sender's clock, ``received`` the kernel's (time.time)."""

    terminal_id: str
    event: str
    payload: Mapping[str, Any] = attrs.field(factory=dict,
                                             converter=lambda m: types.MappingProxyType(dict(m)))
    sent: float | None = None
    received: float = 0.0


def sender_command(socket_path: str, terminal_id: str) -> list[str]:
    """The program and arguments a hook runs for ``terminal_id`` (the event name goes last)."""
    return [sys.executable, "-I", "-S", signal_send.__file__, "--socket", socket_path,
            "--terminal", terminal_id]


class SignalChannel:
    """A bound signal socket and the thread reading it. ``on_signal`` runs on that thread."""

    def __init__(self, path: Path, on_signal: Callable[[NativeSignal], None]) -> None:
        self.path = path
        self._on_signal = on_signal
        self._sock: socket.socket | None = None
        self._wake_r: int | None = None
        self._wake_w: int | None = None
        self._thread: threading.Thread | None = None
        self._closing = False

    @classmethod
    def open(cls, runtime_dir: Path, on_signal: Callable[[NativeSignal], None]) -> SignalChannel:
        """Bind the channel for a cao home's runtime folder and start its reader thread."""
        folder = _socket_folder(runtime_dir)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            path = _bind(sock, folder)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        channel = cls(path, on_signal)
        channel._sock = sock
        channel._wake_r, channel._wake_w = os.pipe()
        channel._thread = threading.Thread(target=channel._run, name="cao-signals", daemon=True)
        channel._thread.start()
        return channel

    def command(self, terminal_id: str) -> list[str]:
        return sender_command(str(self.path), terminal_id)

    def env(self, terminal_id: str) -> dict[str, str]:
        """What a terminal (and its provider's launch context) learns about the channel."""
        return {signal_send.SOCKET_ENV: str(self.path),
                signal_send.COMMAND_ENV: json.dumps(self.command(terminal_id))}

    def _run(self) -> None:
        assert self._sock is not None and self._wake_r is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._sock, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self._closing:
                for key, _ in selector.select():
                    if key.fileobj is self._sock:
                        self._drain()

    def _drain(self) -> None:
        assert self._sock is not None
        while True:
            try:
                data = self._sock.recv(signal_send.MAX_DATAGRAM + 1)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # closed under us
            received = time.time()
            try:
                terminal_id, event, payload, sent = signal_send.decode(data)
            except ValueError as exc:
                log.debug("dropped a malformed signal datagram: %s", exc)
                continue
            try:
                self._on_signal(NativeSignal(terminal_id=terminal_id, event=event, payload=payload,
                                             sent=sent, received=received))
            except Exception:  # noqa: BLE001 - the reader must outlive any bug downstream
                log.exception("handling a native signal failed")

    def close(self) -> None:
        """Stop the thread, close the socket and remove its file. Idempotent."""
        if self._closing:
            return
        self._closing = True
        if self._wake_w is not None:
            os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(5)
        for fd in (self._wake_r, self._wake_w):
            if fd is not None:
                os.close(fd)
        self._wake_r = self._wake_w = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        try:
            self.path.unlink()
        except OSError:
            pass


def _socket_folder(runtime_dir: Path) -> Path:
    if len(os.fsencode(runtime_dir / "signal-4194304.sock")) <= MAX_SOCKET_PATH:
        return runtime_dir
    # Too long for a socket address: a private folder of ours under the temporary folder.
    digest = hashlib.sha256(os.fsencode(runtime_dir.resolve())).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"cao-{os.getuid()}-{digest}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        raise OSError(f"{folder} is not a private folder of this user; not binding a signal socket there")
    return folder


def _bind(sock: socket.socket, folder: Path) -> Path:
    """Bind ``sock`` to the channel's usual name in ``folder``, or to a per-process one when another
    live kernel holds it. A socket file nobody listens on is a leftover of a kernel that died: replaced."""
    for name in (SOCKET_NAME, f"signal-{os.getpid()}.sock"):
        path = folder / name
        if os.path.lexists(path) and not _listening(path):
            path.unlink()
        try:
            sock.bind(str(path))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:  # anything but a live listener there is a real problem
                raise
            continue
        os.chmod(path, 0o600)
        return path
    raise OSError(f"no free signal socket name in {folder}")


def _listening(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


# -- the kernel's side ----------------------------------------------------------------------------


def open_channel(
    settings: Mapping[str, Any], providers: Iterable[ProviderSpec], runtime_dir: Path,
    on_signal: Callable[[NativeSignal], None],
) -> SignalChannel | None:
    """Open the channel for a starting kernel, when one of its ``providers`` maps native signals.

    Runs on the event loop; ``on_signal`` is called back on that loop for every valid signal. Never
    raises: without a channel the kernel reads screens only.
    """
    if str(settings.get(SETTING, "1")).strip().lower() in ("0", "false", "no", "off"):
        return None
    if not any(spec.native_signal is not None for spec in providers):
        return None
    if not sys.executable:
        log.warning("native status signals are off: no Python interpreter path to give hooks")
        return None
    import asyncio

    loop = asyncio.get_running_loop()

    def from_thread(signal: NativeSignal) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(on_signal, signal)

    try:
        channel = SignalChannel.open(runtime_dir, from_thread)
    except OSError as exc:
        log.warning("native status signals are off: cannot open the signal socket: %s", exc)
        return None
    log.debug("native signal channel listening at %s", channel.path)
    return channel


def answer_of(provider: ProviderSpec | None, signal: NativeSignal) -> str | None:
    """The turn's answer a signal carries, read by its terminal's provider (None: none, or not text)."""
    read = provider.native_answer if provider is not None else None
    if read is None:
        return None
    try:
        answer = read(signal.event, signal.payload)
    except Exception:  # noqa: BLE001 - a provider bug must not stop status tracking
        log.exception("provider %s: native_answer(%r) raised", provider.name, signal.event)
        return None
    return answer if isinstance(answer, str) and answer.strip() else None


def report_of(provider: ProviderSpec | None, signal: NativeSignal) -> StatusReport | None:
    """The status a signal says, mapped by its terminal's provider (None: nothing to report), with the
    evidence ``native: <event>``."""
    from cao_hookspecs import StatusReport

    if provider is None or provider.native_signal is None:
        log.debug("signal %s for terminal %s: no such terminal or no mapping", signal.event,
                  signal.terminal_id)
        return None
    try:
        report = provider.native_signal(signal.event, signal.payload)
    except Exception:  # noqa: BLE001 - a provider bug must not stop status tracking
        log.exception("provider %s: native_signal(%r) raised", provider.name, signal.event)
        return None
    if report is None:
        return None
    if not isinstance(report, StatusReport):
        log.warning("provider %s: native_signal(%r) returned %r, not a StatusReport", provider.name,
                    signal.event, type(report).__name__)
        return None
    evidence = f"native: {signal.event}" + (f" ({report.evidence})" if report.evidence else "")
    if signal.sent is not None:
        log.debug("terminal %s: native %s -> %s, %.1f ms after it was sent", signal.terminal_id, signal.event,
                  report.status.value, (signal.received - signal.sent) * 1000)
    return StatusReport(status=report.status, evidence=evidence)
