"""``TmuxBackend``: cao terminals as tmux windows, their output pushed through pipe-pane FIFOs."""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from cao_hookspecs.errors import Conflict, InvalidInput

from . import checks, listing, procs, viewer
from .errors import TerminalExited, TerminalNotFound, TmuxError, TmuxNotRunning, TmuxTargetMissing
from .quoting import died_hook, format_literal, pipe_command, write_env_file
from .reader import EXITED, KEEP, LOST, REARM, OutputReader, Stream
from .screen import dead_screen, paste_payload, tidy_capture
from .server import TmuxServer

if TYPE_CHECKING:
    from cao_hookspecs import (
        InputMark,
        OutputEvent,
        RuntimeContext,
        SessionInfo,
        TerminalInfo,
        TerminalLaunch,
    )

log = logging.getLogger(__name__)

T = TypeVar("T")

SESSION_PREFIX = "cao-"
# What a new window runs until its options and output pipe are in place: silent, and long-lived
# enough that the window cannot close before ``respawn-pane`` replaces it with the real program. It
# waits on its terminal rather than on a clock: ``respawn-pane -k`` ends it by closing that terminal,
# which reaches a program through SIGHUP only once it is the terminal's controlling process, and a
# placeholder that missed it must not wait for ever.
PLACEHOLDER = ("cat", "-")
# Run by ``sh -c`` with the environment file as $0 and the program as "$@".
ENV_LOADER = 'set -a && . "$0" && rm -f -- "$0" && set +a && exec "$@"'
_DEAD_MARK = "cao-pane-dead"
_END_MARK = "cao-capture-end"
_INPUT_OPTION = "@cao_input"
_SUBMITTED = "submitted"
# Re-opening a pipe whose ``cat`` vanished is fine now and then; a pipe that keeps dying is reported.
_REARM_LIMIT = 3
_REARM_WINDOW = 60.0


class TmuxBackend:
    """The ``tmux`` terminal backend (implements ``cao_hookspecs.TerminalBackend``).

    A cao session is a tmux session, a terminal is a window whose ``@cao_id`` option holds the cao
    terminal id, ``@cao_meta`` the launch metadata (JSON) and ``@cao_name`` its name, so a fresh
    backend re-adopts every terminal from tmux alone. All methods may be called from many threads at once.

    :param home_dir: the cao home; FIFOs live in ``<home>/runtime/fifos/``.
    :param socket_path: ``tmux -S``; wins over ``socket_name``.
    :param socket_name: ``tmux -L``; neither given means the user's default server.
    :param config_file: ``tmux -f`` for a server this backend starts (``os.devnull``: no config).
    :param kill_grace: seconds between SIGTERM and SIGKILL when killing a terminal's processes.
    :param coalesce: seconds output is gathered into one event after its first chunk.
    """

    name = "tmux"

    def __init__(
        self,
        *,
        home_dir: str | os.PathLike[str],
        socket_path: str | None = None,
        socket_name: str | None = None,
        config_file: str | None = None,
        kill_grace: float = 0.5,
        coalesce: float = 0.005,
    ) -> None:
        self.server = TmuxServer(
            socket_path=socket_path, socket_name=None if socket_path else socket_name, config_file=config_file
        )
        self.fifo_dir = Path(home_dir) / "runtime" / "fifos"
        self.kill_grace = kill_grace
        self._lock = threading.Lock()
        self._panes: dict[str, str] = {}
        self._sessions: set[str] = set()
        self._synced = False
        self._sync_lock = threading.Lock()
        self._named_locks: dict[str, threading.Lock] = {}
        self._rearms: dict[str, list[float]] = {}
        self._reader = OutputReader(self._judge, self._rearm, coalesce=coalesce)

    @classmethod
    def from_context(cls, ctx: RuntimeContext) -> TmuxBackend:
        """Build from the kernel's settings: ``CAO_TMUX_SOCKET``, ``CAO_TMUX_SOCKET_NAME``,
        ``CAO_TMUX_CONFIG``."""

        def setting(name: str) -> str | None:
            value = ctx.settings.get(name)
            return None if value in (None, "") else str(value)

        return cls(
            home_dir=ctx.home_dir,
            socket_path=setting("CAO_TMUX_SOCKET"),
            socket_name=setting("CAO_TMUX_SOCKET_NAME"),
            config_file=setting("CAO_TMUX_CONFIG"),
        )

    def __repr__(self) -> str:
        return f"<TmuxBackend {self.server.describe()}>"

    # -- creation ---------------------------------------------------------------------------------

    def create_terminal(self, launch: TerminalLaunch) -> None:
        """Start ``launch.argv`` in a new window (and the session, if it does not exist yet).

        The window first runs a silent placeholder; in the same tmux invocation it gets
        ``remain-on-exit``, its cao options, the ``pane-died`` hook and its output pipe, and only then
        ``respawn-pane -k`` swaps in the real program. So the pipe sees the program's first byte, and a
        program that exits at once leaves its last screen and exit status behind.
        """
        cwd, env, meta = checks.launch(launch)
        tid = launch.terminal_id
        self._ensure_synced()
        with self._lock:
            if tid in self._panes:
                raise Conflict(f"terminal {tid} already exists (tmux pane {self._panes[tid]})")
        stream = self._open_stream(tid, "")
        self._reader.add(stream)
        env_file = stream.out_path.removesuffix(".out") + ".env"
        try:
            write_env_file(env_file, env)
            pane = self._spawn(launch, cwd, env_file, meta, stream)
        except BaseException:
            self._reader.remove(tid)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(env_file)
            raise
        _consumed(env_file)
        stream.pane_id = pane
        self._remember(tid, pane)

    def _spawn(self, launch: TerminalLaunch, cwd: str, env_file: str, meta: str, stream: Stream) -> str:
        session = launch.session_name
        with self._lock:
            known = session in self._sessions
        if not known:
            # Only the first terminal of a session is serialised: two threads must not both try
            # new-session for it. Later ones open windows in parallel.
            with self._named_lock("session:" + session):
                with self._lock:
                    known = session in self._sessions
                if not known:
                    pane = self._spawn_in(launch, cwd, env_file, meta, stream, new_session=True)
                    with self._lock:
                        self._sessions.add(session)
                    return pane
        return self._spawn_in(launch, cwd, env_file, meta, stream, new_session=False)

    def _spawn_in(
        self,
        launch: TerminalLaunch,
        cwd: str,
        env_file: str,
        meta: str,
        stream: Stream,
        *,
        new_session: bool,
    ) -> str:
        try:
            return self._run_spawn(launch, cwd, env_file, meta, stream, new_session=new_session)
        except TmuxError as exc:
            if listing.first_pane_id(exc.stdout) is not None:
                raise  # the window existed and has been removed again: a real refusal
            if new_session:
                if "duplicate session" in exc.stderr:
                    # Another process created the session first: join it.
                    return self._run_spawn(launch, cwd, env_file, meta, stream, new_session=False)
                if isinstance(exc, TmuxNotRunning):
                    return self._retry_new_session(launch, cwd, env_file, meta, stream)
                raise
            if isinstance(exc, TmuxNotRunning) or "can't find session" in exc.stderr:
                # The session (or the whole server) went away behind our back: create it again.
                with self._lock:
                    self._sessions.discard(launch.session_name)
                with self._named_lock("session:" + launch.session_name):
                    return self._spawn_in(launch, cwd, env_file, meta, stream, new_session=True)
            raise

    def _retry_new_session(
        self, launch: TerminalLaunch, cwd: str, env_file: str, meta: str, stream: Stream
    ) -> str:
        # The previous server was still shutting down (its last window had just closed) when our
        # client tried to start a new one; tmux's client then gives up instead of waiting.
        for delay in (0.05, 0.2, 0.5):
            time.sleep(delay)
            try:
                return self._run_spawn(launch, cwd, env_file, meta, stream, new_session=True)
            except TmuxNotRunning as exc:
                if delay == 0.5 or listing.first_pane_id(exc.stdout) is not None:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _run_spawn(
        self,
        launch: TerminalLaunch,
        cwd: str,
        env_file: str,
        meta: str,
        stream: Stream,
        *,
        new_session: bool,
    ) -> str:
        session, tid = launch.session_name, launch.terminal_id
        # A name nobody else uses, so every command below can target the window in the same invocation.
        starting = f"cao-starting-{tid}"
        target = f"={session}:={starting}"
        start_dir = format_literal(cwd)
        width, height = str(launch.width), str(launch.height)
        new = ["-n", starting, "-c", start_dir, "-P", "-F", "#{pane_id}", "--", *PLACEHOLDER]
        if new_session:
            first = [["new-session", "-d", "-s", session, "-x", width, "-y", height, *new]]
        else:
            first = [
                ["new-window", "-d", "-t", f"={session}:", *new],
                ["resize-window", "-t", target, "-x", width, "-y", height],
                # Back to the default sizing, so the window follows a client that attaches later.
                ["set-option", "-w", "-u", "-t", target, "window-size"],
            ]
        # The environment comes from a 0600 file the pane's shell reads and removes before it runs the
        # program: values on tmux's command line would show in /proc to every user.
        argv = ["sh", "-c", ENV_LOADER, env_file, *launch.argv]
        commands = [
            *first,
            ["set-option", "-w", "-t", target, "remain-on-exit", "on"],
            ["set-option", "-w", "-t", target, "--", listing.ID_OPTION, tid],
            ["set-option", "-w", "-t", target, "--", listing.META_OPTION, meta],
            ["set-option", "-w", "-t", target, "--", listing.NAME_OPTION, launch.window_name],
            # What a viewer's leaving puts the window back to (see attach_argv).
            ["set-option", "-w", "-t", target, "--", listing.SIZE_OPTION, f"{width}x{height}"],
            ["set-option", "-p", "-t", target, "--", listing.PIPE_OPTION, stream.out_path],
            ["set-hook", "-p", "-t", target, "pane-died", died_hook(stream.ctl_path)],
            ["pipe-pane", "-t", target, pipe_command(stream.out_path)],
            ["respawn-pane", "-k", "-t", target, "-c", start_dir, "--", *argv],
            ["display-message", "-p", "-t", target, "#{pane_pid}"],
            ["rename-window", "-t", target, "--", format_literal(launch.window_name)],
        ]
        try:
            out = self.server.run(*commands)
        except TmuxError as exc:
            created = listing.first_pane_id(exc.stdout)
            if created is not None:
                # Leave nothing half-made: the window (and with it a session it alone made up) goes.
                self._quietly(["kill-window", "-t", created])
            raise
        pane = listing.first_pane_id(out)
        if pane is None:
            raise TmuxError(f"tmux created a window for terminal {tid} but did not say which pane: {out!r}")
        pid = out.split("\n")[1].strip() if out.count("\n") >= 2 else ""
        if pid.isdigit():
            self._reader.track_pid(stream, int(pid), procs.open_pidfd(int(pid)))
            self._check_started_in(cwd, int(pid), pane, tid)
        return pane

    def _check_started_in(self, cwd: str, pid: int, pane: str, tid: str) -> None:
        """tmux falls back to another folder when it cannot use the one given (a format it expanded into a
        path that does not exist): an agent must never run anywhere else than asked."""
        wanted = os.path.realpath(cwd)
        deadline = time.monotonic() + 5.0
        try:
            while True:
                # tmux's child changes folder just before it runs the program: once it runs something
                # other than tmux (read first), its folder is the one tmux chose.
                started = not _is_tmux(os.readlink(f"/proc/{pid}/exe"))
                actual = os.readlink(f"/proc/{pid}/cwd")
                if actual == wanted or actual.startswith(wanted.rstrip("/") + "/"):
                    return
                if started:
                    break
                if time.monotonic() > deadline:
                    return  # not started after seconds: nothing to judge
                time.sleep(0.002)
        except OSError:
            return  # already gone, or no /proc here
        self._reader.remove(tid)
        with contextlib.suppress(TmuxError):
            out = self.server.run(["display-message", "-p", "-t", pane, listing.PROCESS_FORMAT])
            rows = listing.process_rows(out)
            self._kill(rows, ["kill-window", "-t", pane])
        raise InvalidInput(f"terminal {tid} started in {actual!r} instead of {cwd!r}; it was removed")

    # -- input and output -------------------------------------------------------------------------

    def send_text(
        self, terminal_id: str, text: str, *, enter_count: int = 1, submit_delay: float = 0.0,
        mark: str | None = None,
    ) -> None:
        """Paste ``text`` as one input, then press Enter ``enter_count`` times.

        The text goes through a uniquely named tmux buffer loaded from stdin (any size, any
        character) and ``paste-buffer -p``: tmux wraps it in bracketed-paste markers exactly when the
        program asked for bracketed paste. With ``submit_delay`` the first Enter (and each further
        one) waits that long; without, the Enters go in the same tmux call as the paste. ``mark`` is
        written into the pane's ``@cao_input`` option by the same tmux command as the paste (``pasted``)
        and as the last Enter (``submitted``): tmux runs a command sequence whole, so the option says
        exactly how far the input got, whenever the caller stopped.
        """
        checks.terminal_id(terminal_id)
        enter_count, submit_delay = checks.submit(enter_count, submit_delay)
        mark = checks.mark(mark)
        if not isinstance(text, str):
            raise InvalidInput(f"text must be a string, not {type(text).__name__}")
        payload = paste_payload(text)
        enters = ["Enter"] * (enter_count if not submit_delay or not payload else 0)
        done_now = bool(enters) or not enter_count

        def paste(pane: str) -> None:
            if not payload:
                if enters or mark:
                    self._send_keys_checked(terminal_id, pane, enters, mark=mark)
                return
            buffer = f"cao-{terminal_id}-{secrets.token_hex(4)}"
            typed = f"paste-buffer -p -r -d -b {buffer} -t {pane}"
            if enters:
                typed += f" ; send-keys -t {pane} " + " ".join(enters)
            if mark:
                typed += " ; " + _mark_command(pane, mark, submitted=done_now)
            # Pasting into a dead pane crashes some tmux versions (3.3a): decide inside tmux, atomically.
            dead = f"delete-buffer -b {buffer} ; display-message -p {_DEAD_MARK}"
            try:
                out = self.server.run(
                    ["load-buffer", "-b", buffer, "-"],
                    ["if-shell", "-F", "-t", pane, "#{pane_dead}", dead, typed],
                    input=payload,
                )
            except TmuxError:
                self._quietly(["delete-buffer", "-b", buffer])
                raise
            if _DEAD_MARK in out:
                raise TerminalExited(f"terminal {terminal_id} has exited: the text was not delivered")

        self._with_pane(terminal_id, paste)
        if payload and enter_count and submit_delay:
            for index in range(enter_count):
                time.sleep(submit_delay)
                last = mark if index == enter_count - 1 else None
                self._with_pane(terminal_id, lambda pane, last=last: self._send_keys_checked(
                    terminal_id, pane, ["Enter"], mark=last))

    def input_mark(self, terminal_id: str) -> InputMark | None:
        """The mark of the last marked input (``@cao_input``), None before the first."""
        checks.terminal_id(terminal_id)
        out = self._with_pane(
            terminal_id, lambda pane: self.server.run(["display-message", "-p", "-t", pane, "#{@cao_input}"])
        )
        mark, _, stage = out.strip().partition(" ")
        if not mark:
            return None
        from cao_hookspecs import InputMark

        return InputMark(mark=mark, submitted=stage == _SUBMITTED)

    def send_keys(self, terminal_id: str, keys: Sequence[str]) -> None:
        """Press tmux keys by name (``Enter``, ``Escape``, ``Up``, ``C-c``, ``y``...), no Enter added."""
        checks.terminal_id(terminal_id)
        names = checks.keys(keys)
        self._with_pane(terminal_id, lambda pane: self._send_keys_checked(terminal_id, pane, names))

    def _send_keys_checked(
        self, terminal_id: str, pane: str, keys: list[str], *, mark: str | None = None
    ) -> None:
        commands = [["display-message", "-p", "-t", pane, "#{pane_dead}"]]
        if keys:
            commands.append(["send-keys", "-t", pane, "--", *keys])
        if mark:
            # Keys sent to an ended program go nowhere: the mark is recorded only while it runs.
            commands.append(["if-shell", "-F", "-t", pane, "#{?pane_dead,,1}",
                             _mark_command(pane, mark, submitted=True)])
        state = self.server.run(*commands)
        if state.strip() == "1":
            raise TerminalExited(f"terminal {terminal_id} has exited: the keys were not delivered")

    def capture(self, terminal_id: str, *, history: int | None = None) -> str:
        """The visible screen; with ``history`` N also N lines of scrollback (-1: all), wrapped lines
        joined. Trailing whitespace and trailing empty rows are removed."""
        checks.terminal_id(terminal_id)
        lines = checks.history(history)

        scroll = ["-J", "-S", "-" if lines == -1 else str(-lines)] if lines else []

        def grab(pane: str) -> str:
            # When a program ends, tmux scrolls its screen up one row to print a "Pane is dead" line;
            # one row of history brings the last screen back whole, and the banner is dropped.
            alive = " ".join(["capture-pane", "-p", "-t", pane, *scroll])
            dead = " ".join(["capture-pane", "-p", "-t", pane, *(scroll or ["-S", "-1"])])
            out = self.server.run(
                ["display-message", "-p", "-t", pane, "#{pane_dead}\t#{pane_height}"],
                ["if-shell", "-F", "-t", pane, "#{pane_dead}", dead, alive],
                # A last line keeps the screen's empty bottom rows: the dead screen's rows are counted.
                ["display-message", "-p", _END_MARK],
            )
            out = out.removesuffix(_END_MARK + "\n")
            state, _, text = out.partition("\n")
            dead_flag, _, height = state.partition("\t")
            if dead_flag != "1":
                return text
            return dead_screen(text, int(height) if height.isdigit() and not scroll else None)

        return tidy_capture(self._with_pane(terminal_id, grab))

    def working_directory(self, terminal_id: str) -> str | None:
        """The current directory of the terminal's foreground program (None once it exited)."""
        checks.terminal_id(terminal_id)
        out = self._with_pane(
            terminal_id,
            lambda pane: self.server.run(["display-message", "-p", "-t", pane, "#{pane_current_path}"]),
        )
        return out.rstrip("\n") or None

    def info(self, terminal_id: str) -> TerminalInfo | None:
        checks.terminal_id(terminal_id)
        try:
            out = self._with_pane(
                terminal_id,
                lambda pane: self.server.run(["display-message", "-p", "-t", pane, listing.PANE_FORMAT]),
            )
        except TerminalNotFound:
            return None
        rows = listing.parse_panes(out)
        if not rows or rows[0].terminal_id != terminal_id:
            return None
        return _terminal_info(rows[0])

    # -- watching ---------------------------------------------------------------------------------

    def watch(self, terminal_id: str, on_event: Callable[[OutputEvent], None]) -> None:
        """Push the terminal's ``OutputEvent``s to ``on_event`` (from the reader thread).

        Output produced since creation is delivered first. For a terminal this backend did not
        create (re-adoption after a restart) the output pipe is re-armed: any previous pipe is closed
        and a new one opened, so calling ``watch`` again is harmless. A terminal whose program already
        ended gets its ``exited`` event at once.
        """
        checks.terminal_id(terminal_id)
        if not callable(on_event):
            raise InvalidInput("on_event must be callable")
        with self._named_lock("terminal:" + terminal_id):
            if self._reader.attach(terminal_id, on_event):
                return
            self._with_pane(terminal_id, lambda pane: self._arm(terminal_id, pane, on_event))

    def unwatch(self, terminal_id: str) -> None:
        """Stop pushing events for a terminal and close its output pipe (the terminal keeps running)."""
        checks.terminal_id(terminal_id)
        stream = self._reader.remove(terminal_id)
        if stream is not None and stream.pane_id and not stream.finished:
            self._quietly(["pipe-pane", "-t", stream.pane_id])

    def _arm(self, terminal_id: str, pane: str, callback: Callable[[OutputEvent], None] | None) -> None:
        stream = self._open_stream(terminal_id, pane)
        self._reader.add(stream, callback)
        try:
            out = self.server.run(
                ["display-message", "-p", "-t", pane, listing.STATE_FORMAT],
                ["set-hook", "-p", "-t", pane, "pane-died", died_hook(stream.ctl_path)],
                ["set-option", "-p", "-t", pane, "--", listing.PIPE_OPTION, stream.out_path],
                # Close whatever pipe is open (ours from before a restart, or none), then open ours.
                ["pipe-pane", "-t", pane],
                ["pipe-pane", "-t", pane, pipe_command(stream.out_path)],
            )
        except TmuxError as exc:
            self._reader.remove(terminal_id)
            row = _state_row(terminal_id, pane, exc.stdout)
            end = row.resolved_exit() if row is not None else None
            if end is None:
                raise
            # tmux refuses pipe-pane on a dead pane: report the exit instead of a pipe.
            if callback is not None:
                from cao_hookspecs import OutputEvent

                event = OutputEvent(terminal_id=terminal_id, kind=EXITED, detail=end.describe())
                self._reader.post(callback, event)
            return
        row = _state_row(terminal_id, pane, out)
        if row is not None and row.pid:
            self._reader.track_pid(stream, row.pid, procs.open_pidfd(row.pid))

    def _rearm(self, stream: Stream) -> None:
        """Reader thread: the pipe's ``cat`` vanished while the pane lives on; open a new pipe."""
        try:
            self._arm(stream.terminal_id, stream.pane_id, stream.callback)
        except Exception as exc:  # noqa: BLE001 - on the reader thread: report, never crash it
            log.warning("could not re-open the output pipe of terminal %s: %s", stream.terminal_id, exc)
            if stream.callback is not None:
                from cao_hookspecs import OutputEvent

                event = OutputEvent(
                    terminal_id=stream.terminal_id,
                    kind=LOST,
                    detail=f"could not re-open the output pipe: {exc}",
                )
                self._reader.post(stream.callback, event)

    def _judge(self, streams: list[Stream]) -> list[tuple[Stream, str, str]]:
        """Reader thread: why did these pipes end (or these programs die)? One tmux call for all."""
        try:
            rows = listing.first_by_terminal(
                listing.parse_pipes(
                    self.server.run(["list-panes", "-a", "-F", listing.PIPE_FORMAT], timeout=5)
                )
            )
        except TmuxNotRunning:
            with self._lock:
                self._panes.clear()
                self._sessions.clear()
            return [(s, LOST, f"tmux server is not running ({self.server.describe()})") for s in streams]
        except TmuxError as exc:
            return [(s, LOST, f"tmux did not answer: {exc}") for s in streams]
        verdicts = []
        nudge = False
        now = time.monotonic()
        for stream in streams:
            row = rows.get(stream.terminal_id)
            if row is None:
                self._forget(stream.terminal_id)
                verdicts.append(
                    (stream, LOST, "terminal window no longer exists (window or session was killed)")
                )
            elif stream.pid_exited and row.pid in (stream.pid, None):
                # Our pidfd saw the program end; tmux may not know yet (or ever: lost SIGCHLD).
                end = row.resolved_exit()
                if (end is None or not end.known) and stream.wait_status is not None:
                    end = listing.Exit.from_wait_status(stream.wait_status)
                if row.exit is None or not row.exit.known:
                    nudge = True
                verdicts.append((stream, EXITED, (end or listing.Exit(None, None)).describe()))
            elif row.exit is not None:
                verdicts.append((stream, EXITED, (row.resolved_exit() or row.exit).describe()))
            elif not stream.eof:
                verdicts.append((stream, KEEP, ""))  # poked, but the program runs again (respawned)
            elif row.path != stream.out_path:
                verdicts.append((stream, LOST, "another cao backend took over this terminal's output"))
            else:
                recent = [t for t in self._rearms.get(stream.terminal_id, []) if now - t < _REARM_WINDOW]
                if len(recent) >= _REARM_LIMIT:
                    verdicts.append((stream, LOST, "the output pipe keeps closing"))
                else:
                    self._rearms[stream.terminal_id] = [*recent, now]
                    verdicts.append((stream, REARM, ""))
        if nudge:
            # tmux 3.3a can miss SIGCHLD and leave the program unreaped; any child of tmux that exits
            # makes it reap them all, record the status and mark the pane dead for everyone.
            self._quietly(["run-shell", "true"])
        return verdicts

    # -- moving -----------------------------------------------------------------------------------

    def move_terminal(self, terminal_id: str, session_name: str, metadata: Mapping[str, str]) -> None:
        """Move the terminal's window, program running, to the end of session ``session_name`` and store
        ``metadata`` in place of its launch metadata (a session left without windows ends)."""
        checks.terminal_id(terminal_id)
        checks.session_name(session_name)
        meta = checks.metadata(metadata)

        try:
            self.server.run(["has-session", "-t", f"={session_name}"])
        except (TmuxTargetMissing, TmuxNotRunning):
            raise TerminalNotFound(f"cannot move terminal {terminal_id} to session {session_name!r}: "
                                   "no such session") from None
        self._with_pane(terminal_id, lambda pane: self.server.run(
            ["move-window", "-d", "-s", pane, "-t", f"={session_name}:"],
            ["set-option", "-w", "-t", pane, "--", listing.META_OPTION, meta]))
        with self._lock:
            self._sessions.add(session_name)

    # -- killing ----------------------------------------------------------------------------------

    def kill_terminal(self, terminal_id: str) -> None:
        """Kill the window and every process started in it. Unknown ids are not an error.

        The terminal's processes are collected before the window goes (its process tree and session,
        and anything carrying its ``CAO_TERMINAL_ID``), then sent SIGTERM, and SIGKILL after
        ``kill_grace`` seconds. No event is pushed for a terminal killed this way.
        """
        checks.terminal_id(terminal_id)
        self._reader.remove(terminal_id)
        for _ in range(2):
            pane = self._lookup(terminal_id)
            if pane is None:
                return
            try:
                out = self.server.run(["display-message", "-p", "-t", pane, listing.PROCESS_FORMAT],
                                      ["list-sessions", "-F", "#{session_name}"])
            except (TmuxTargetMissing, TmuxNotRunning):
                self._forget(terminal_id)
                continue
            rows = listing.process_rows(out)
            if not rows or rows[0][0] != terminal_id:
                self._forget(terminal_id)  # a stale pane id, from before a server restart
                continue
            self._end_viewers(viewer.of_terminals(out.splitlines(), [terminal_id]))
            self._kill([rows[0]], ["kill-window", "-t", pane])
            self._forget(terminal_id)
            with self._lock:
                self._named_locks.pop("terminal:" + terminal_id, None)
            return

    def kill_session(self, session_name: str) -> None:
        """Kill every terminal of a session (processes included), then the session. Unknown: no-op."""
        checks.session_name(session_name)
        try:
            out = self.server.run(
                ["list-panes", "-s", "-t", f"={session_name}", "-F", listing.PROCESS_FORMAT],
                ["list-sessions", "-F", "#{session_name}"],
            )
        except (TmuxTargetMissing, TmuxNotRunning):
            out = ""
        rows = listing.process_rows(out)
        terminal_ids = {row[0] for row in rows if row[0]}
        for tid in terminal_ids:
            self._reader.remove(tid)
        # A viewer session holds the session's windows too: left alone, they would outlive the session.
        self._end_viewers(viewer.of_terminals(out.splitlines(), terminal_ids))
        if rows:
            self._kill(rows, ["kill-session", "-t", f"={session_name}"])
        with self._lock:
            self._sessions.discard(session_name)
            self._named_locks.pop("session:" + session_name, None)
            for row in rows:
                self._panes.pop(row[0], None)
                self._named_locks.pop("terminal:" + row[0], None)

    def _end_viewers(self, names: list[str]) -> None:
        """Remove the viewer sessions of terminals that are going. Before the window goes: a viewer left
        on a grouped session would move to another agent's window and take it to its own size. After:
        one that joined meanwhile would keep the windows alive."""
        for name in names:
            self._quietly(["kill-session", "-t", f"={name}"])

    def _kill(self, rows: list[list[str]], command: list[str]) -> None:
        """Collect the processes of ``rows`` (PROCESS_FORMAT fields), run the tmux kill, end the viewers of
        their terminals, reap the processes."""
        # A dead pane's pid may have been reused by an unrelated process: only live panes give roots.
        roots = {int(pid) for _, _, pid, _, dead in rows if pid.isdigit() and dead != "1"}
        servers = {int(spid) for _, _, _, spid, _ in rows if spid.isdigit()}
        table = procs.snapshot()
        # The server's other children are other terminals' programs and pipes: never ours to kill.
        others = {p.pid for p in table.values() if p.ppid in servers and p.pid not in roots}
        victims = procs.started_in(
            table,
            roots=roots,
            terminal_ids=[tid for tid, *_ in rows if tid],
            protect=servers | others,
        )
        handles = procs.prepare(victims)
        try:
            try:
                # A viewer that joined since the caller looked would hold the windows on: look again.
                sessions = self.server.run(command, ["list-sessions", "-F", "#{session_name}"], timeout=5)
            except TmuxError as exc:
                log.debug("ignored: %s", exc)
                sessions = ""
            self._end_viewers(viewer.of_terminals(sessions.splitlines(), [tid for tid, *_ in rows if tid]))
            left = procs.terminate(handles, grace=self.kill_grace)
        finally:
            procs.release(handles)
        if left:
            log.warning("processes %s survived SIGKILL", left)

    # -- viewers ----------------------------------------------------------------------------------

    def attach_argv(self, terminal_id: str) -> list[str]:
        """The command line of a viewer: run under a terminal (a PTY) on this machine, it shows the
        terminal and takes its keys without moving any other client (see :mod:`cao_tmux.viewer`).

        The viewer's tmux client joins a session of its own, grouped with the terminal's session. Ending
        the viewer (a signal to its process group, or its terminal closing) removes that session, puts the
        window back to its launch size when no other client shows it, and leaves the agent running.
        Killing the terminal or its session ends its viewers.
        """
        checks.terminal_id(terminal_id)
        out = self._with_pane(
            terminal_id,
            lambda pane: self.server.run(["display-message", "-p", "-t", pane, listing.VIEW_FORMAT]),
        )
        row = listing.parse_view(out)
        if row is None or row.terminal_id != terminal_id:
            self._forget(terminal_id)  # a stale pane id, from before a server restart
            raise TerminalNotFound(f"no terminal {terminal_id} on the {self.server.describe()}")
        config = ["-f", self.server.config_file] if self.server.config_file else []
        # -u: the viewer's terminal speaks UTF-8, whatever the locale of the process that runs it.
        tmux = [self.server.binary(), "-u", *config, "-S", row.socket_path]
        return viewer.program(tmux, viewer.new_name(terminal_id), row.session_name, row.window_id, row.width,
                              row.height)

    # -- listing ----------------------------------------------------------------------------------

    def list_sessions(self) -> list[SessionInfo]:
        """cao's sessions (names starting ``cao-``): ``active`` if a client is attached, else ``detached``."""
        from cao_hookspecs import SessionInfo

        if self.server.socket_absent():
            return []
        sessions = []
        # libtmux answers an empty list when no server runs.
        for session in self.server.libtmux().sessions:
            name = session.session_name or ""
            if name.startswith(SESSION_PREFIX):
                attached = session.session_attached or ""
                status = "active" if attached.isdigit() and int(attached) > 0 else "detached"
                sessions.append(SessionInfo(name=name, status=status, working_directory=session.session_path))
        return sessions

    def list_terminals(self, session_name: str | None = None) -> list[TerminalInfo]:
        """Every window carrying ``@cao_id`` (optionally of one session), with its stored metadata."""
        if session_name is not None:
            checks.session_name(session_name)
        rows = self._sync()
        return [
            _terminal_info(row)
            for row in listing.first_by_terminal(rows).values()
            if session_name is None or row.session_name == session_name
        ]

    # -- life cycle -------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the reader thread and close the FIFOs; the terminals keep running.

        The tmux pipes are closed too, so no ``cat`` is left writing into a FIFO nobody reads; a later
        backend re-arms them in ``watch``.
        """
        live = self._reader.close()
        commands = [["pipe-pane", "-t", s.pane_id] for s in live if s.pane_id]
        if commands:
            self._quietly(*commands)

    # -- internals --------------------------------------------------------------------------------

    def _open_stream(self, terminal_id: str, pane: str) -> Stream:
        """Create a fresh FIFO pair for a terminal and open our ends (before tmux opens its end)."""
        self.fifo_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        for stale in self.fifo_dir.glob(f"{terminal_id}.*"):
            stale.unlink(missing_ok=True)
        # A fresh name per arming: an old stream being torn down can never unlink the new FIFO.
        base = self.fifo_dir / f"{terminal_id}.{secrets.token_hex(4)}"
        out_path, ctl_path = f"{base}.out", f"{base}.ctl"
        fds: list[int] = []
        try:
            os.mkfifo(out_path, 0o600)
            os.mkfifo(ctl_path, 0o600)
            fds.append(os.open(out_path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC))
            # Read-write: the hook's writer coming and going must never look like end of file.
            fds.append(os.open(ctl_path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC))
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            for path in (out_path, ctl_path):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            raise TmuxError(
                f"cannot create the output FIFO for terminal {terminal_id} in {self.fifo_dir}: {exc}"
            )
        return Stream(terminal_id, pane, out_path, ctl_path, fds[0], fds[1])

    def _with_pane(self, terminal_id: str, action: Callable[[str], T]) -> T:
        """Run ``action(pane_id)``; if tmux no longer knows the pane, look the terminal up again once."""
        pane = self._pane(terminal_id)
        try:
            return action(pane)
        except TmuxTargetMissing:
            self._forget(terminal_id)
            pane = self._pane(terminal_id)
            try:
                return action(pane)
            except TmuxTargetMissing:
                self._forget(terminal_id)
                raise TerminalNotFound(
                    f"terminal {terminal_id} no longer exists on the {self.server.describe()}"
                )
        except TmuxNotRunning as exc:
            raise TerminalNotFound(f"terminal {terminal_id} is gone: {exc}") from None

    def _pane(self, terminal_id: str) -> str:
        pane = self._lookup(terminal_id)
        if pane is None:
            raise TerminalNotFound(f"no terminal {terminal_id} on the {self.server.describe()}")
        return pane

    def _lookup(self, terminal_id: str) -> str | None:
        with self._lock:
            pane = self._panes.get(terminal_id)
        if pane is None:
            self._sync()
            with self._lock:
                pane = self._panes.get(terminal_id)
        return pane

    def _sync(self) -> list[listing.PaneRow]:
        """Learn every cao terminal and session from tmux (after a restart, or on a miss)."""
        try:
            rows = listing.parse_panes(self.server.run(["list-panes", "-a", "-F", listing.PANE_FORMAT]))
        except TmuxNotRunning:
            rows = []
        with self._lock:
            self._synced = True
            self._sessions.update(row.session_name for row in rows)
        for tid, row in listing.first_by_terminal(rows).items():
            self._remember(tid, row.pane_id)
        return rows

    def _ensure_synced(self) -> None:
        if not self._synced:
            with self._sync_lock:
                if not self._synced:
                    self._sync()

    def _remember(self, terminal_id: str, pane: str) -> None:
        with self._lock:
            # Pane ids restart at %0 with a new server: an older owner of this id is stale.
            for other in [t for t, p in self._panes.items() if p == pane and t != terminal_id]:
                del self._panes[other]
            self._panes[terminal_id] = pane

    def _forget(self, terminal_id: str) -> None:
        with self._lock:
            self._panes.pop(terminal_id, None)

    @contextlib.contextmanager
    def _named_lock(self, name: str) -> Iterator[None]:
        with self._lock:
            lock = self._named_locks.setdefault(name, threading.Lock())
        with lock:
            yield

    def _quietly(self, *commands: Sequence[str]) -> None:
        """Best-effort tmux commands (clean-up): failures are logged, not raised."""
        try:
            self.server.run(*commands, timeout=5)
        except TmuxError as exc:
            log.debug("ignored: %s", exc)


def _is_tmux(executable: str) -> bool:
    return os.path.basename(executable).startswith("tmux")


def _consumed(env_file: str, timeout: float = 2.0) -> None:
    """Wait for the pane's shell to read and remove its environment file; remove it if it never does
    (the program did not start), so no copy of the values stays on disk."""
    deadline = time.monotonic() + timeout
    while os.path.exists(env_file):
        if time.monotonic() > deadline:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(env_file)
            return
        time.sleep(0.001)


def _mark_command(pane: str, mark: str, *, submitted: bool) -> str:
    """The tmux command recording ``mark`` on the pane, as :meth:`TmuxBackend.input_mark` reads it (the
    mark is checked: no quoting needed)."""
    return f"set-option -p -t {pane} {_INPUT_OPTION} '{mark} {_SUBMITTED if submitted else 'pasted'}'"


def _state_row(terminal_id: str, pane: str, out: str) -> listing.PaneRow | None:
    """The row of a ``listing.STATE_FORMAT`` answer (its first line)."""
    fields = out.split("\n", 1)[0].split("\t")
    if len(fields) != 4:
        return None
    dead, status, sig, pid = fields
    return listing.PaneRow(
        terminal_id=terminal_id,
        pane_id=pane,
        exit=listing.exit_of(dead, status, sig),
        pid=int(pid) if pid.isdigit() else None,
    )


def _terminal_info(row: listing.PaneRow) -> TerminalInfo:
    from cao_hookspecs import TerminalInfo

    end = row.resolved_exit()
    return TerminalInfo(
        terminal_id=row.terminal_id,
        session_name=row.session_name,
        window_name=row.window_name,
        alive=end is None,
        exit_status=None if end is None else end.code,
        working_directory=row.path or None,
        metadata=row.metadata,
    )
