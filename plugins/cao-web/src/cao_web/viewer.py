"""A viewer program (a terminal backend's attach command) run under a pseudo-terminal of its own, read and
written through the event loop.

- The program gets a new session, so its process group is its own: ``SIGWINCH`` after a resize and the
  signals that end it go to that group, reaching whatever it runs (cao-tmux's viewer is a shell running a
  tmux client) and nothing else.
- Nothing polls and no thread waits: the PTY is read when the loop says it is readable, one chunk per
  :meth:`Viewer.read`, so output is taken only as fast as the caller passes it on; the program's exit is
  seen through its pidfd (a thread waits for it only where Linux has no pidfds, before 5.3).
- :meth:`Viewer.end` leaves nothing: SIGTERM to the group and its PTY closed, SIGKILL after a grace
  period, the group swept with SIGKILL once the program has exited (its id cannot be anyone else's
  before the program is reaped, so the program is reaped only then), and both descriptors closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import signal
import struct
import subprocess
import termios
from collections.abc import Callable, Sequence

#: The most one read takes from the PTY (and so the largest frame a client gets).
READ_SIZE = 64 * 1024
#: What a viewer's environment keeps of the server's: where programs and the user's files are, the
#: language. No credential of the server's reaches the program (tmux copies a client's environment into
#: its session).
KEPT_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TMUX_TMPDIR")


class Viewer:
    """One viewer program under a PTY; made by :meth:`start`, finished by :meth:`end`."""

    def __init__(self, proc: subprocess.Popen[bytes], master: int) -> None:
        self.proc = proc
        self.master = master
        self._loop = asyncio.get_running_loop()
        self._exit: asyncio.Future[int] = self._loop.create_future()
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self._waiter = asyncio.ensure_future(asyncio.to_thread(proc.wait))
            self._waiter.add_done_callback(lambda done: self._exited())
        else:
            self._loop.add_reader(self._pidfd, self._exited)

    @classmethod
    def start(cls, argv: Sequence[str], rows: int, cols: int) -> Viewer:
        """Run ``argv`` under a new ``rows`` x ``cols`` PTY (``TERM=xterm-256color``); raises ``OSError``
        when it cannot be started."""
        import pty

        master, slave = pty.openpty()  # both close on exec: the program gets the PTY as 0, 1 and 2 only
        try:
            _set_size(master, rows, cols)
            os.set_blocking(master, False)
            env = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
            env["TERM"] = "xterm-256color"
            proc = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave, env=env,
                                    start_new_session=True)
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        return cls(proc, master)

    # -- the program's life -----------------------------------------------------------------------

    def _exited(self) -> None:
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
        if self._exit.done():
            return
        code = self.proc.returncode
        if code is None:
            # Not reaped yet: until it is, its process group id cannot be anyone else's (see _release).
            try:
                info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:  # reaped behind our back: the status is lost
                code = 0
            else:
                code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        self._exit.set_result(code)

    async def wait(self) -> int:
        """The program's exit status, once it has exited (negative: the signal that ended it)."""
        return await asyncio.shield(self._exit)

    @property
    def running(self) -> bool:
        return not self._exit.done()

    async def end(self, grace: float = 3.0) -> int:
        """End the program unless it has ended, and release everything; returns its exit status.

        Its terminal closes with the signal: a signal can fall between a shell's fork and its child's
        exec and be lost, but a tmux client whose terminal is gone always ends.
        """
        try:
            if self.running:
                self._signal(signal.SIGTERM)
                self._done_with_master()
                try:
                    await asyncio.wait_for(self.wait(), grace)
                except TimeoutError:
                    self._signal(signal.SIGKILL)
                    await asyncio.wait_for(self.wait(), grace)
        finally:
            self._release()
        return self.proc.returncode

    def _release(self) -> None:
        """Synchronous and idempotent: also right when :meth:`end` was cancelled halfway."""
        # Whatever the program left in its group goes with it; before the reap its id is still its own.
        self._signal(signal.SIGKILL)
        if self._pidfd is not None:
            with contextlib.suppress(ValueError, OSError):
                self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self._done_with_master()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(1)

    def _signal(self, number: int) -> None:
        if self.proc.returncode is None:  # once reaped, the group id may be a stranger's
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, number)

    def _done_with_master(self) -> None:
        if self.master >= 0:
            for remove in (self._loop.remove_reader, self._loop.remove_writer):
                with contextlib.suppress(ValueError, OSError):
                    remove(self.master)
            os.close(self.master)
            self.master = -1

    # -- its terminal -----------------------------------------------------------------------------

    async def read(self) -> bytes:
        """The next chunk the program drew (at most :data:`READ_SIZE` bytes); ``b""`` once its terminal
        is closed (the program and whatever shared the PTY have ended)."""
        while self.master >= 0:
            try:
                return os.read(self.master, READ_SIZE)
            except BlockingIOError:
                await self._until(self._loop.add_reader, self._loop.remove_reader)
            except OSError as exc:
                if exc.errno == errno.EIO:  # Linux: no process holds the PTY any more
                    return b""
                raise
        return b""

    async def write(self, data: bytes) -> None:
        """Type ``data``; waits while the program does not read. A program gone takes nothing."""
        view = memoryview(data)
        while view and self.master >= 0:
            try:
                view = view[os.write(self.master, view):]
            except BlockingIOError:
                await self._until(self._loop.add_writer, self._loop.remove_writer)
            except OSError as exc:
                if exc.errno == errno.EIO:
                    return
                raise

    def resize(self, rows: int, cols: int) -> None:
        """Give the terminal a new size and say so: the program has no controlling terminal that would."""
        if self.master < 0:
            return
        _set_size(self.master, rows, cols)
        if self.running:
            self._signal(signal.SIGWINCH)

    async def _until(self, add: Callable[..., None], remove: Callable[[int], object]) -> None:
        ready: asyncio.Future[None] = self._loop.create_future()
        add(self.master, _resolve, ready)
        try:
            await ready
        finally:
            if self.master >= 0:
                remove(self.master)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
