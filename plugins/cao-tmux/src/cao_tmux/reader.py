"""The one thread that turns every terminal's pane output into pushed ``OutputEvent``s.

Each watched terminal has two FIFOs and a pidfd: tmux's ``pipe-pane`` copies the pane's output into
the *out* FIFO; the pane's program has a pidfd that becomes readable when it exits; and the pane's
``pane-died`` hook writes a byte into the *ctl* FIFO (the fallback where pidfds are unavailable). A
single thread waits on all of them with ``selectors`` and nothing else: with no output pending it
blocks without a timeout, so idle terminals cost no CPU at all.

Output is coalesced: the first chunk opens a short window (a few ms) and everything that arrives in
it goes out as one event, or sooner when the batch reaches ``chunk`` bytes. When a FIFO reaches end of
file, or the program is known to have died, the backend's ``judge`` decides what happened (exited,
lost, or re-arm the pipe) after the output still in flight has been read.
"""

from __future__ import annotations

import collections
import logging
import os
import selectors
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from .procs import zombie_status

if TYPE_CHECKING:
    from cao_hookspecs import OutputEvent

log = logging.getLogger(__name__)

EXITED = "exited"
LOST = "lost"
REARM = "rearm"
KEEP = "keep"

Callback = Callable[["OutputEvent"], None]


class Stream:
    """One armed output pipe: the FIFO pair of one terminal and what is buffered for it."""

    def __init__(
        self, terminal_id: str, pane_id: str, out_path: str, ctl_path: str, out_fd: int, ctl_fd: int
    ):
        self.terminal_id = terminal_id
        self.pane_id = pane_id
        self.out_path = out_path
        self.ctl_path = ctl_path
        self.out_fd: int | None = out_fd
        self.ctl_fd: int | None = ctl_fd
        # The pane's program: a pidfd tells us when it exits even when tmux misses it.
        self.pid: int | None = None
        self.pid_fd: int | None = None
        self.pid_exited = False
        self.wait_status: int | None = None
        self.callback: Callback | None = None
        self.pending = bytearray()
        self.flush_at: float | None = None
        self.died_at: float | None = None
        self.settle_at: float | None = None
        self.eof = False
        self.finished = False
        self.dropped = False
        # Events produced before anyone watches (the kernel watches right after creating).
        self.backlog: collections.deque[OutputEvent] = collections.deque()
        self.backlog_bytes = 0

    def __repr__(self) -> str:
        return f"<Stream {self.terminal_id} {self.pane_id}>"


Judge = Callable[[list[Stream]], list[tuple[Stream, str, str]]]


@attrs.define(eq=False)
class OutputReader:
    """Multiplexes every stream of one backend on one thread.

    :param judge: called on the reader thread with streams whose pipe ended or whose program died;
        returns ``(stream, verdict, detail)`` with verdict ``exited``, ``lost``, ``rearm`` or ``keep``.
    :param rearm: called on the reader thread with a stream whose pipe must be opened again.
    """

    _judge: Judge
    _rearm: Callable[[Stream], None]
    coalesce: float = attrs.field(default=0.005, kw_only=True)
    settle: float = attrs.field(default=0.05, kw_only=True)
    settle_max: float = attrs.field(default=0.5, kw_only=True)
    chunk: int = attrs.field(default=65536, kw_only=True)
    backlog_limit: int = attrs.field(default=1 << 20, kw_only=True)
    _lock: threading.Lock = attrs.field(init=False, factory=threading.Lock)
    _streams: dict[str, Stream] = attrs.field(init=False, factory=dict)
    _ops: collections.deque[tuple] = attrs.field(init=False, factory=collections.deque)
    _thread: threading.Thread | None = attrs.field(init=False, default=None)
    _wake_w: int | None = attrs.field(init=False, default=None)
    _timed: set[Stream] = attrs.field(init=False, factory=set)

    # -- called from any thread -------------------------------------------------------------------

    def add(self, stream: Stream, callback: Callback | None = None) -> None:
        """Start reading ``stream`` (replacing any stream of the same terminal)."""
        stream.callback = callback
        with self._lock:
            old = self._streams.get(stream.terminal_id)
            if old is not None:
                old.dropped = True
                old.callback = None
                self._ops.append(("drop", old))
            self._streams[stream.terminal_id] = stream
            self._ops.append(("add", stream))
            self._start()
            self._wake()

    def attach(self, terminal_id: str, callback: Callback) -> bool:
        """Send a stream's events to ``callback`` from now on (backlog first). False if there is none."""
        with self._lock:
            stream = self._streams.get(terminal_id)
            if stream is None or stream.dropped:
                return False
            self._ops.append(("attach", stream, callback))
            self._wake()
            return True

    def remove(self, terminal_id: str) -> Stream | None:
        """Stop a terminal's stream at once: no event for it is delivered after this returns."""
        with self._lock:
            stream = self._streams.pop(terminal_id, None)
            if stream is None:
                return None
            stream.dropped = True
            stream.callback = None
            self._ops.append(("drop", stream))
            self._wake()
            return stream

    def track_pid(self, stream: Stream, pid: int, pid_fd: int | None) -> None:
        """Watch the pane's program through ``pid_fd`` (taken over: the reader closes it)."""
        with self._lock:
            if stream.dropped or pid_fd is None:
                if pid_fd is not None:
                    os.close(pid_fd)
                return
            self._ops.append(("pid", stream, pid, pid_fd))
            self._wake()

    def post(self, callback: Callback, event: OutputEvent) -> None:
        """Call ``callback(event)`` on the reader thread, after everything queued before it."""
        with self._lock:
            self._ops.append(("call", callback, event))
            self._start()
            self._wake()

    def get(self, terminal_id: str) -> Stream | None:
        with self._lock:
            return self._streams.get(terminal_id)

    def live(self) -> list[Stream]:
        """Streams whose pipe is still open."""
        with self._lock:
            return [s for s in self._streams.values() if not s.finished]

    def close(self, timeout: float = 5.0) -> list[Stream]:
        """Stop the thread and close every FIFO. Returns the streams that were still live."""
        with self._lock:
            live = [s for s in self._streams.values() if not s.finished]
            thread = self._thread
            if thread is not None:
                self._ops.append(("stop",))
                self._wake()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                log.warning(
                    "cao-tmux output reader did not stop within %.1f s (a callback is blocking)", timeout
                )
        return live

    # -- internals --------------------------------------------------------------------------------

    def _start(self) -> None:
        # Caller holds the lock.
        if self._thread is not None:
            return
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._wake_w = wake_w
        self._thread = threading.Thread(target=self._run, args=(wake_r,), name="cao-tmux-reader", daemon=True)
        self._thread.start()

    def _wake(self) -> None:
        if self._wake_w is not None:
            try:
                os.write(self._wake_w, b"x")
            except BlockingIOError:
                pass  # already full of wake-ups: the reader will see every queued op anyway

    def _run(self, wake_r: int) -> None:
        sel = selectors.DefaultSelector()
        sel.register(wake_r, selectors.EVENT_READ, None)
        try:
            while True:
                ready = sel.select(self._timeout())
                now = time.monotonic()
                to_judge: list[Stream] = []
                for key, _ in ready:
                    if key.data is None:
                        _drain(wake_r)
                        if self._run_ops(sel):
                            return
                        continue
                    stream, which = key.data
                    # An earlier key of this round may have closed this fd (end of file, pid exit).
                    if stream.dropped or stream.finished or getattr(stream, which + "_fd") != key.fd:
                        continue
                    try:
                        self._ready(sel, stream, which, now, to_judge)
                    except Exception:
                        log.exception("cao-tmux reader failed on terminal %s", stream.terminal_id)
                self._due(now, to_judge)
                if to_judge:
                    self._decide(sel, to_judge)
        except Exception:  # pragma: no cover - a bug here must not die silently
            log.exception("cao-tmux output reader crashed")
        finally:
            self._shutdown(sel, wake_r)

    def _shutdown(self, sel: selectors.BaseSelector, wake_r: int) -> None:
        with self._lock:
            streams = list(self._streams.values())
            streams += [op[1] for op in self._ops if op[0] in ("add", "drop")]
            for op in self._ops:
                if op[0] == "pid":
                    os.close(op[3])
            self._streams.clear()
            self._ops.clear()
            self._thread = None
            wake_w, self._wake_w = self._wake_w, None
        for stream in streams:
            self._close_fds(sel, stream)
        self._timed.clear()
        sel.close()
        os.close(wake_r)
        if wake_w is not None:
            os.close(wake_w)

    def _run_ops(self, sel: selectors.BaseSelector) -> bool:
        while True:
            with self._lock:
                if not self._ops:
                    return False
                op = self._ops.popleft()
            kind = op[0]
            if kind == "stop":
                return True
            if kind == "add":
                stream = op[1]
                if stream.dropped:
                    self._close_fds(sel, stream)
                    continue
                sel.register(stream.out_fd, selectors.EVENT_READ, (stream, "out"))
                sel.register(stream.ctl_fd, selectors.EVENT_READ, (stream, "ctl"))
            elif kind == "pid":
                stream, pid, pid_fd = op[1], op[2], op[3]
                if stream.dropped or stream.finished:
                    os.close(pid_fd)
                    continue
                if stream.pid_fd is not None:
                    self._close_pid(sel, stream)
                stream.pid, stream.pid_fd, stream.pid_exited = pid, pid_fd, False
                sel.register(pid_fd, selectors.EVENT_READ, (stream, "pid"))
            elif kind == "drop":
                self._timed.discard(op[1])
                self._close_fds(sel, op[1])
            elif kind == "attach":
                self._attach(op[1], op[2])
            elif kind == "call":
                _call(op[1], op[2])

    def _attach(self, stream: Stream, callback: Callback) -> None:
        if stream.dropped:
            return
        stream.callback = callback
        while stream.backlog:
            _call(callback, stream.backlog.popleft())
        stream.backlog_bytes = 0
        if stream.finished:
            self._forget(stream)

    def _ready(
        self, sel: selectors.BaseSelector, stream: Stream, which: str, now: float, to_judge: list[Stream]
    ) -> None:
        if which == "out":
            self._read_out(sel, stream, now, to_judge)
        elif which == "pid":
            # Read the status before anyone reaps the zombie: tmux may never do it.
            stream.wait_status = zombie_status(stream.pid)
            stream.pid_exited = True
            self._close_pid(sel, stream)
            self._died(sel, stream, now, to_judge)
        else:
            _drain(stream.ctl_fd)  # type: ignore[arg-type]
            self._died(sel, stream, now, to_judge)

    def _read_out(
        self, sel: selectors.BaseSelector, stream: Stream, now: float, to_judge: list[Stream]
    ) -> bool:
        """Read one chunk; True if data came (there may be more)."""
        try:
            data = os.read(stream.out_fd, self.chunk)  # type: ignore[arg-type]
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if data:
            self._buffer(stream, data, now)
            return True
        # End of file: the pipe's writer (``cat``) is gone, so the window, session or server is.
        self._flush(stream)
        sel.unregister(stream.out_fd)
        os.close(stream.out_fd)  # type: ignore[arg-type]
        stream.out_fd = None
        stream.eof = True
        to_judge.append(stream)
        return False

    def _died(self, sel: selectors.BaseSelector, stream: Stream, now: float, to_judge: list[Stream]) -> None:
        if stream.died_at is None:
            stream.died_at = now
        # The program is gone but its last output may still be on its way through tmux and ``cat``:
        # read what already arrived, then wait until the pipe has been quiet a moment before judging.
        while stream.out_fd is not None and self._read_out(sel, stream, now, to_judge):
            pass
        self._settle_later(stream, now)

    def _buffer(self, stream: Stream, data: bytes, now: float) -> None:
        if not stream.pending:
            stream.flush_at = now + self.coalesce
        stream.pending += data
        if len(stream.pending) >= self.chunk:
            self._flush(stream)
        if stream.died_at is not None:
            self._settle_later(stream, now)
        if stream.flush_at is not None or stream.settle_at is not None:
            self._timed.add(stream)

    def _settle_later(self, stream: Stream, now: float) -> None:
        assert stream.died_at is not None
        stream.settle_at = min(now + self.settle, stream.died_at + self.settle_max)
        self._timed.add(stream)

    def _timeout(self) -> float | None:
        if not self._timed:
            return None  # nothing pending: sleep until a FIFO or an op wakes us
        deadlines = [t for s in self._timed for t in (s.flush_at, s.settle_at) if t is not None]
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())

    def _due(self, now: float, to_judge: list[Stream]) -> None:
        for stream in list(self._timed):
            if stream.flush_at is not None and stream.flush_at <= now:
                self._flush(stream)
            if stream.settle_at is not None and stream.settle_at <= now:
                stream.settle_at = None
                self._flush(stream)
                if stream not in to_judge:
                    to_judge.append(stream)
            if stream.flush_at is None and stream.settle_at is None:
                self._timed.discard(stream)

    def _flush(self, stream: Stream) -> None:
        stream.flush_at = None
        if stream.pending:
            from cao_hookspecs import OutputEvent

            data = bytes(stream.pending)
            stream.pending.clear()
            self._emit(stream, OutputEvent(terminal_id=stream.terminal_id, kind="output", data=data))

    def _emit(self, stream: Stream, event: OutputEvent) -> None:
        if stream.dropped:
            return
        callback = stream.callback
        if callback is not None:
            _call(callback, event)
            return
        stream.backlog.append(event)
        stream.backlog_bytes += len(event.data)
        # Keep the newest output when nobody watches for long; end-of-life events are never dropped.
        while stream.backlog_bytes > self.backlog_limit and stream.backlog[0].kind == "output":
            stream.backlog_bytes -= len(stream.backlog.popleft().data)

    def _decide(self, sel: selectors.BaseSelector, streams: list[Stream]) -> None:
        streams = [s for s in streams if not (s.dropped or s.finished)]
        if not streams:
            return
        try:
            verdicts = self._judge(streams)
        except Exception as exc:
            log.exception("cao-tmux could not tell why an output pipe ended")
            verdicts = [(s, LOST, f"cannot determine the terminal's state: {exc}") for s in streams]
        from cao_hookspecs import OutputEvent

        for stream, verdict, detail in verdicts:
            if stream.dropped or stream.finished:
                continue
            if verdict == KEEP and not stream.eof:
                stream.died_at = None
                stream.pid_exited = False
                continue
            if verdict == KEEP:
                verdict, detail = LOST, detail or "output pipe closed"
            # Last look: anything that reached the FIFO while we asked tmux still belongs to the stream.
            while stream.out_fd is not None and self._read_out(sel, stream, time.monotonic(), []):
                pass
            self._flush(stream)
            self._timed.discard(stream)
            self._close_fds(sel, stream)
            stream.finished = True
            if verdict == REARM:
                self._forget(stream)
                self._rearm(stream)
                continue
            self._emit(stream, OutputEvent(terminal_id=stream.terminal_id, kind=verdict, detail=detail))
            if stream.callback is not None:
                self._forget(stream)

    def _forget(self, stream: Stream) -> None:
        with self._lock:
            if self._streams.get(stream.terminal_id) is stream:
                del self._streams[stream.terminal_id]

    def _close_pid(self, sel: selectors.BaseSelector, stream: Stream) -> None:
        if stream.pid_fd is not None:
            try:
                sel.unregister(stream.pid_fd)
            except (KeyError, ValueError):
                pass
            os.close(stream.pid_fd)
            stream.pid_fd = None

    def _close_fds(self, sel: selectors.BaseSelector, stream: Stream) -> None:
        self._close_pid(sel, stream)
        for attr in ("out_fd", "ctl_fd"):
            fd = getattr(stream, attr)
            if fd is None:
                continue
            try:
                sel.unregister(fd)
            except (KeyError, ValueError):
                pass
            os.close(fd)
            setattr(stream, attr, None)
        for path in (stream.out_path, stream.ctl_path):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def _call(callback: Callback, event: OutputEvent) -> None:
    try:
        callback(event)
    except Exception:
        log.exception("on_event callback failed for terminal %s (%s event)", event.terminal_id, event.kind)
