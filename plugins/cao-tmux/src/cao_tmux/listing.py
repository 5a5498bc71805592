"""tmux format strings the backend asks for, and parsers for their tab-separated answers.

Fields are separated by tabs. tmux escapes control characters in session names, cao's window names
(kept verbatim in ``@cao_name``: tmux escapes backslashes in its own copy) have none, the metadata is
ASCII JSON and ids never contain tabs, so only paths could: each format therefore has at most one
path, and it comes last.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import signal

log = logging.getLogger(__name__)

ID_OPTION = "@cao_id"
META_OPTION = "@cao_meta"
NAME_OPTION = "@cao_name"
PIPE_OPTION = "@cao_pipe"
SIZE_OPTION = "@cao_size"
#: The cao session a pane belongs to. A viewer's session (:mod:`cao_tmux.viewer`) is grouped with it and
#: holds the same windows: ``list-panes -a`` lists them once per session of the group, and a pane target
#: may resolve to any of them. The group is named after the session it was made from, the cao session.
SESSION_FIELD = "#{?session_grouped,#{session_group},#{session_name}}"


def fields(*formats: str) -> str:
    """One tab-separated format line."""
    return "\t".join(formats)


PANE_FORMAT = fields(
    "#{@cao_id}",
    "#{pane_id}",
    SESSION_FIELD,
    "#{pane_dead}",
    "#{pane_dead_status}",
    "#{pane_dead_signal}",
    "#{@cao_meta}",
    "#{?@cao_name,#{@cao_name},#{window_name}}",
    "#{pane_pid}",
    "#{?pane_dead,#{pane_start_path},#{pane_current_path}}",
)
PIPE_FORMAT = fields(
    "#{@cao_id}",
    "#{pane_id}",
    "#{pane_dead}",
    "#{pane_dead_status}",
    "#{pane_dead_signal}",
    "#{pane_pid}",
    "#{@cao_pipe}",
)
STATE_FORMAT = fields("#{pane_dead}", "#{pane_dead_status}", "#{pane_dead_signal}", "#{pane_pid}")
#: What attaching a viewer needs; the size the window was launched with is empty for windows made before
#: cao recorded it. The socket path is the server's own, whatever found it (the default server included).
VIEW_FORMAT = fields("#{@cao_id}", "#{window_id}", SESSION_FIELD, "#{@cao_size}", "#{window_width}",
                     "#{window_height}", "#{socket_path}")
PROCESS_FORMAT = fields("#{@cao_id}", "#{pane_id}", "#{pane_pid}", "#{pid}", "#{pane_dead}")


def process_rows(out: str) -> list[list[str]]:
    """The rows of a ``PROCESS_FORMAT`` listing, as lists of its five fields (other lines dropped)."""
    return [line.split("\t") for line in out.splitlines() if line.count("\t") == 4]


@dataclasses.dataclass(frozen=True)
class Exit:
    """How a dead pane's program ended."""

    status: int | None
    signal: int | None

    @classmethod
    def from_wait_status(cls, status: int) -> Exit:
        import os

        code = os.waitstatus_to_exitcode(status)
        return cls(status=code, signal=None) if code >= 0 else cls(status=None, signal=-code)

    @property
    def known(self) -> bool:
        return self.status is not None or bool(self.signal)

    @property
    def code(self) -> int | None:
        """A shell-style exit status: the status itself, or 128 + the signal number (None: unknown)."""
        if self.status is not None:
            return self.status
        return 128 + self.signal if self.signal else None

    def describe(self) -> str:
        if self.status is not None:
            return f"program exited with status {self.status}"
        if self.signal:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = "unknown signal"
            return f"program was killed by signal {self.signal} ({name}), exit status {self.code}"
        return "program exited (status unknown)"


@dataclasses.dataclass(frozen=True)
class PaneRow:
    terminal_id: str
    pane_id: str
    session_name: str = ""
    exit: Exit | None = None  # None while the program runs
    metadata: dict[str, str] = dataclasses.field(default_factory=dict)
    window_name: str = ""
    pid: int | None = None
    path: str = ""

    def resolved_exit(self) -> Exit | None:
        """How the program ended, also when tmux never collected its status (lost SIGCHLD, or the
        program exited while another process still holds the terminal open)."""
        if self.exit is not None and self.exit.known:
            return self.exit
        from .procs import zombie_status

        status = zombie_status(self.pid)
        if status is not None:
            return Exit.from_wait_status(status)
        return self.exit


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def exit_of(dead: str, status: str, sig: str) -> Exit | None:
    """The exit of a pane from its ``pane_dead``, ``pane_dead_status`` and ``pane_dead_signal``."""
    if dead != "1":
        return None
    return Exit(status=_int(status), signal=_int(sig))


def metadata(text: str) -> dict[str, str]:
    """The ``@cao_meta`` JSON; anything unreadable (edited by hand) gives an empty mapping."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        log.warning("ignoring unreadable cao metadata %r", text[:200])
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def parse_panes(text: str) -> list[PaneRow]:
    """Rows of :data:`PANE_FORMAT` output."""
    rows = []
    for line in text.splitlines():
        parts = line.split("\t", 9)
        if len(parts) != 10:
            continue
        tid, pane, session, dead, status, sig, meta, window, pid, path = parts
        rows.append(
            PaneRow(
                terminal_id=tid,
                pane_id=pane,
                session_name=session,
                exit=exit_of(dead, status, sig),
                metadata=metadata(meta),
                window_name=window,
                pid=_int(pid),
                path=path,
            )
        )
    return rows


def parse_pipes(text: str) -> list[PaneRow]:
    """Rows of :data:`PIPE_FORMAT` output (``path`` is the FIFO the pane's pipe writes to)."""
    rows = []
    for line in text.splitlines():
        parts = line.split("\t", 6)
        if len(parts) != 7:
            continue
        tid, pane, dead, status, sig, pid, pipe = parts
        rows.append(
            PaneRow(terminal_id=tid, pane_id=pane, exit=exit_of(dead, status, sig), pid=_int(pid), path=pipe)
        )
    return rows


@dataclasses.dataclass(frozen=True)
class ViewRow:
    """A :data:`VIEW_FORMAT` answer: where a viewer attaches, and the size the window goes back to."""

    terminal_id: str
    window_id: str
    session_name: str
    width: int
    height: int
    socket_path: str


def parse_view(text: str) -> ViewRow | None:
    """The first :data:`VIEW_FORMAT` row of ``text`` (None: there is none)."""
    for line in text.splitlines():
        parts = line.split("\t", 6)
        if len(parts) != 7:
            continue
        tid, window, session, size, width, height, socket = parts
        launched = size.split("x")
        if len(launched) == 2 and all(value.isdigit() for value in launched):
            width, height = launched
        if not (width.isdigit() and height.isdigit()):
            return None
        return ViewRow(terminal_id=tid, window_id=window, session_name=session, width=int(width),
                       height=int(height), socket_path=socket)
    return None


def first_by_terminal(rows: list[PaneRow]) -> dict[str, PaneRow]:
    """Rows keyed by terminal id; a window someone split keeps its first pane."""
    found: dict[str, PaneRow] = {}
    for row in rows:
        if row.terminal_id and row.terminal_id not in found:
            found[row.terminal_id] = row
    return found


def first_pane_id(text: str) -> str | None:
    """The ``%N`` pane id ``-P -F '#{pane_id}'`` printed first, if any."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("%") and line[1:].isdigit():
            return line
    return None
