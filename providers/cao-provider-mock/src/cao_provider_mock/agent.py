"""The ``mock_cli`` program: an offline stand-in for an agent CLI.

With a terminal on stdin it behaves like an agent TUI (raw mode, its own echo, bracketed paste, Enter
submits); otherwise it reads one input per line, like upstream's script. Start-up is on the critical
path of every test and benchmark, so only small stdlib modules are imported.
"""

from __future__ import annotations

import os
import sys
import time

from .contract import (
    ANSWER,
    BANNER,
    DEFAULT_DELAY_MS,
    EMPTY,
    EXIT,
    GOODBYE,
    PROMPT,
    VERSION,
    react,
)

USAGE = """\
usage: mock_cli [--delay-ms N] [--behaviour NAME] [--mcp-config FILE] [--mcp-delay-ms N] [--version] [--help]

An offline mock agent CLI. Prints a banner and the prompt, then answers each input with
'> MOCK: <input>' after N milliseconds (default 50).

  __mock_error__      print 'ERROR: mock failure injected'
  __mock_sleep_<S>    wait S seconds (decimal), then print '> MOCK: slept <S>s'
  /exit, /quit        print 'goodbye' and exit

With --behaviour, every other input goes to a scripted behaviour instead: an entry point of group
cao.mock_behaviours, or package.module:function. It may call the MCP tools of the servers in the
--mcp-config file ({"mcpServers": {...}}). cao's own server of that file (cao-mcp-server) is
connected right after the prompt appears, or --mcp-delay-ms N milliseconds later; a tool called
before then is not available yet. Other arguments are ignored.
"""

BRACKETED_PASTE_ON = "\x1b[?2004h"
BRACKETED_PASTE_OFF = "\x1b[?2004l"


class UsageError(Exception):
    """A command-line argument the program cannot accept."""


class Options:
    __slots__ = ("delay_ms", "action", "behaviour", "mcp_config", "mcp_delay_ms")

    def __init__(self) -> None:
        self.delay_ms = DEFAULT_DELAY_MS
        self.action = "run"
        self.behaviour: str | None = None
        self.mcp_config: str | None = None
        self.mcp_delay_ms = 0


_VALUE_OPTIONS = {"--delay-ms": "milliseconds", "--behaviour": "a behaviour name", "--mcp-config": "a file",
                  "--mcp-delay-ms": "milliseconds"}


def parse_args(args: list[str]) -> Options:
    """Parse the command line; unknown arguments are ignored, as agent CLIs' mocks must tolerate them."""
    options = Options()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--version", "--help", "-h"):
            options.action = "version" if arg == "--version" else "help"
            return options
        name = arg.partition("=")[0]
        if name in _VALUE_OPTIONS:
            if arg == name:
                i += 1
                if i >= len(args):
                    raise UsageError(f"{name} needs a value ({_VALUE_OPTIONS[name]})")
                value = args[i]
            else:
                value = arg.partition("=")[2]
            if name in ("--delay-ms", "--mcp-delay-ms"):
                if not (value.isascii() and value.isdigit()):
                    raise UsageError(f"{name} needs a whole number of milliseconds, got {value!r}")
                if name == "--delay-ms":
                    options.delay_ms = int(value)
                else:
                    options.mcp_delay_ms = int(value)
            elif not value:
                raise UsageError(f"{name} needs a value ({_VALUE_OPTIONS[name]})")
            elif name == "--behaviour":
                options.behaviour = value
            else:
                options.mcp_config = value
        i += 1
    return options


def main(argv: list[str] | None = None) -> int:
    """Run mock_cli; returns the exit status."""
    try:
        options = parse_args(sys.argv[1:] if argv is None else list(argv))
    except UsageError as exc:
        _write(2, f"mock_cli: {exc}\n{USAGE}")
        return 2
    if options.action == "version":
        _write(1, f"mock_cli {VERSION}\n")
        return 0
    if options.action == "help":
        _write(1, USAGE)
        return 0
    delay = options.delay_ms / 1000
    tty = os.isatty(0)
    host = None
    servers = None
    try:
        if options.mcp_config is not None:
            from .mcp_config import read_config

            servers = read_config(options.mcp_config)
        if options.behaviour is not None:
            host = _behaviour_host(options, "\r\n" if tty else "\n")
    except ValueError as exc:
        _write(2, f"mock_cli: {exc}\n")
        return 2
    connected = None
    if servers:
        connected = EarlyConnections(options.mcp_config, servers, options.mcp_delay_ms / 1000)
    if host is not None:
        host.connected = connected
    grace = 2.0
    try:
        if tty:
            return TerminalSession(delay, host=host).run()
        return run_lines(delay, host)
    except KeyboardInterrupt:
        return 130
    except OSError:
        # The terminal or the pipe went away: nobody is left to talk to.
        return 0
    except SystemExit:
        grace = 0.3  # a signal: whoever sent it will not wait long; MCP servers also stop on EOF
        raise
    finally:
        if host is not None:
            host.close(grace)
        if connected is not None:
            connected.close(grace)


class EarlyConnections:
    """Connects cao's MCP server of the config (``mcp_pipe``), as an agent CLI connects its servers when
    it starts: cao gives the agent its task once that connection has listed cao's tools.

    Everything, imports included, happens in a background thread started here, ``delay`` seconds before
    the server is started: the prompt does not wait for any of it.
    """

    def __init__(self, config: str | None, servers: dict, delay: float) -> None:
        import threading

        self._clients: dict = {}
        self._thread = threading.Thread(target=self._start, args=(config, servers, delay), daemon=True,
                                        name="mcp-start")
        self._thread.start()

    def _start(self, config: str | None, servers: dict, delay: float) -> None:
        from .mcp_pipe import connect_cao_servers

        self._clients = connect_cao_servers(servers, os.path.dirname(os.path.abspath(config or ".")), delay)

    def clients(self) -> dict:
        """``mcp_pipe.PipeClient`` by server name (each may still be connecting)."""
        self._thread.join()
        return self._clients

    def close(self, grace: float) -> None:
        for client in self.clients().values():
            client.close(grace)


def _behaviour_host(options: Options, newline: str) -> LazyHost:
    """Load the behaviour before the banner, so a bad profile fails at start (the MCP config is checked
    by the caller, before this)."""
    from .behaviours import load_behaviour

    behaviour = load_behaviour(options.behaviour or "")
    return LazyHost(behaviour, options.mcp_config, lambda row: _write(1, row + newline))


class LazyHost:
    """A ``turns.BehaviourHost`` built on the first turn: its event loop and thread cost start-up time."""

    def __init__(self, behaviour, mcp_config: str | None, write) -> None:
        self._args = (behaviour, mcp_config, write)
        self._host = None
        # Servers connected at start-up, handed to the host's MCP connections.
        self.connected = None

    def _get(self):
        if self._host is None:
            from .turns import BehaviourHost

            self._host = BehaviourHost(*self._args, connected=self.connected)
        return self._host

    def submit(self, text: str, prompt_opened=None):
        return self._get().submit(text, prompt_opened)

    def take_prompt(self):
        return self._get().take_prompt()

    def cancel(self, future) -> None:
        self._get().cancel(future)

    def close(self, grace: float = 2.0) -> None:
        if self._host is not None:
            self._host.close(grace)


def _write(fd: int, text: str) -> None:
    data = text.encode("utf-8", "replace")
    while data:
        data = data[os.write(fd, data):]


def run_lines(delay: float, host: LazyHost | None = None) -> int:
    """Non-terminal mode: one input per line, no echo (the caller sees only what the program prints)."""
    from .keys import PASTE_END, PASTE_START

    _write(1, f"{BANNER}\n{PROMPT}")
    lines = (raw.decode("utf-8", "replace").removesuffix("\n").removesuffix("\r") for raw in sys.stdin.buffer)
    for line in lines:
        # Upstream's script accepts a paste that arrives as one line with its markers still on.
        line = line.removeprefix(PASTE_START).removesuffix(PASTE_END)
        reaction = react(line, delay)
        if reaction.kind == EXIT:
            _write(1, reaction.line + "\n")
            return 0
        if host is not None and reaction.ordinary:
            _write(1, "".join(row + "\n" for row in _line_turn(host, line, lines)))
        elif reaction.kind == ANSWER:
            if reaction.wait > 0:
                time.sleep(reaction.wait)
            _write(1, reaction.line + "\n")
        _write(1, PROMPT)
    return 0


def _line_turn(host: LazyHost, text: str, lines) -> list[str]:
    """A behaviour's turn without a terminal: its prompts are printed and answered from the next input
    lines (``asking.lines_answer``); returns the rows that end the turn."""
    import queue

    from .asking import PromptState, lines_answer
    from .turns import turn_rows

    news: queue.SimpleQueue[bool] = queue.SimpleQueue()
    future = host.submit(text, lambda: news.put(True))
    future.add_done_callback(lambda _: news.put(False))
    # A turn cannot end while its prompt waits, so every prompt's news comes before the end's.
    while news.get():
        pending = host.take_prompt()
        if pending is not None:
            ask, answer = pending
            _write(1, "".join(row + "\n" for row in PromptState(ask).rows(1 << 16)))
            answer(lines_answer(ask, lines))
    return turn_rows(future)


def _terminate(signum: int, frame: object) -> None:
    # Unwinds through TerminalSession.run's finally, which gives the terminal back.
    raise SystemExit(128 + signum)


class TerminalSession:
    """Raw-mode mode: reads keys, echoes them itself, and submits the line on Enter."""

    def __init__(self, delay: float, fd: int = 0, host: LazyHost | None = None) -> None:
        from collections import deque

        from .composer import Composer
        from .keys import KeyDecoder

        self.delay = delay
        self.fd = fd
        # Set when a scripted behaviour answers ordinary inputs.
        self.host = host
        self._wake: tuple[int, int] | None = None
        self.decoder = KeyDecoder()
        self.composer = Composer()
        self.events: deque[tuple[str, str]] = deque()
        self._out: list[str] = []
        self._hung_up = False

    def run(self) -> int:
        import signal
        import termios

        saved = termios.tcgetattr(self.fd)
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, _terminate)
        try:
            termios.tcsetattr(self.fd, termios.TCSANOW, _raw(saved))
            self.emit(f"{BRACKETED_PASTE_ON}{BANNER}\r\n{PROMPT}")
            return self._loop()
        finally:
            self._out.clear()
            try:
                _write(1, BRACKETED_PASTE_OFF)
                # TCSADRAIN: let the goodbye reach the screen before the mode changes.
                termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)
            except OSError:
                pass  # the terminal is gone; there is nothing left to restore

    # -- output -----------------------------------------------------------------------------------

    def emit(self, text: str) -> None:
        self._out.append(text)

    def flush(self) -> None:
        if self._out:
            text = "".join(self._out)
            self._out.clear()
            _write(1, text)

    # -- input ------------------------------------------------------------------------------------

    def _read(self) -> bytes | None:
        """One chunk of input, or None once the terminal has hung up."""
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""  # EIO: the other side of the pty was closed
        if not data:
            self._hung_up = True
            return None
        return data

    def _loop(self) -> int:
        from .keys import BACKSPACE, ENTER, EOF, INTERRUPT, PASTE, TEXT

        while True:
            if not self.events:
                self.flush()
                data = self._read()
                if data is None:
                    return 0
                self.events.extend(self.decoder.feed(data))
                continue
            kind, text = self.events.popleft()
            if kind == TEXT:
                self.emit(self.composer.type(text))
            elif kind == PASTE:
                self.emit(self.composer.paste(text))
            elif kind == BACKSPACE:
                self.emit(self.composer.backspace())
            elif kind == INTERRUPT:
                self.composer.clear()
                self.emit(f"^C\r\n{PROMPT}")
            elif kind == EOF:
                if self.composer.empty:
                    self.emit("\r\n")
                    self.flush()
                    return 0
            elif kind == ENTER:
                if self._submit(self.composer.take()):
                    self.flush()
                    return 0

    def _submit(self, text: str) -> bool:
        """Answer one input; True when the program should exit."""
        self.emit("\r\n")
        reaction = react(text, self.delay)
        if reaction.kind == EXIT:
            self.emit(f"{GOODBYE}\r\n")
            return True
        if reaction.kind == EMPTY:
            self.emit(PROMPT)
            return False
        if self.host is not None and reaction.ordinary:
            return self._turn(text)
        if reaction.wait > 0:
            self.flush()
            interrupted = self._busy(reaction.wait)
            if self._hung_up:
                return True
            if interrupted:
                self.emit(f"^C\r\n{PROMPT}")
                return False
        self.emit(f"{reaction.line}\r\n{PROMPT}")
        return False

    def _turn(self, text: str) -> bool:
        """Let the behaviour answer ``text``; True when the program should exit (the terminal hung up)."""
        from .turns import turn_rows

        # What was emitted so far must be on screen before the behaviour prints its progress rows.
        self.flush()
        wake = self._wake_pipe()
        future = self.host.submit(text, lambda: os.write(wake[1], b"?"))
        interrupted = self._busy_until(future)
        if self._hung_up:
            self.host.cancel(future)
            return True
        if interrupted:
            self.host.cancel(future)
            self.emit(f"^C\r\n{PROMPT}")
            return False
        self.emit("".join(row + "\r\n" for row in turn_rows(future)) + PROMPT)
        return False

    def _busy_until(self, future) -> bool:
        """Like ``_busy``, until ``future`` is done rather than for a time; True if Ctrl-C came first."""
        import select

        from .keys import INTERRUPT

        wake_read, wake_write = self._wake_pipe()
        future.add_done_callback(lambda _: os.write(wake_write, b"."))
        if self._drop_through_interrupt(INTERRUPT):
            return True
        while not future.done():
            ready, _, _ = select.select([self.fd, wake_read], [], [])
            if wake_read in ready:
                os.read(wake_read, 512)
                pending = self.host.take_prompt()
                if pending is not None:
                    outcome = self._prompt(*pending)
                    if outcome is not None:
                        return outcome
                continue
            outcome = self._collect_typed()
            if outcome is not None:
                return outcome
        # A byte the callback writes after this returns only wakes the next turn's loop once, harmlessly.
        return False

    def _wake_pipe(self) -> tuple[int, int]:
        """A pipe whose read end wakes the main thread: a turn ended, or opened a prompt."""
        if self._wake is None:
            self._wake = os.pipe()
        return self._wake

    def _prompt(self, ask, answer) -> bool | None:
        """Show a behaviour's prompt and read keys until it is answered (None), Ctrl-C cancels the turn
        (True) or the terminal hangs up (False). Keys typed before the prompt opened stay type-ahead for
        the input line: only keys pressed while it shows answer it."""
        import select
        from collections import deque

        from .asking import PromptState, draw, erase
        from .keys import INTERRUPT

        state = PromptState(ask)
        width = _columns(self.fd)
        rows = state.rows(width)
        self.emit(draw(rows))
        keys: deque[tuple[str, str]] = deque()
        while True:
            while keys:
                kind, text = keys.popleft()
                if kind == INTERRUPT:
                    self.emit(erase(rows, width))
                    self.events.clear()
                    return True
                choice, rest = state.feed(kind, text)
                if choice is not None:
                    self.events.extend([*rest, *keys])
                    self.emit(erase(rows, width))
                    self.flush()
                    answer(choice)
                    return None
                fresh = state.rows(width)
                if fresh != rows:
                    self.emit(erase(rows, width) + draw(fresh))
                    rows = fresh
            self.flush()
            # A lone ESC is the Esc key once nothing follows it for a moment (a sequence arrives at once).
            wait = 0.05 if self.decoder.holds_escape else None
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                keys.extend(self.decoder.lone_escape())
                continue
            data = self._read()
            if data is None:
                return False
            keys.extend(self.decoder.feed(data))

    def _busy(self, seconds: float) -> bool:
        """Wait ``seconds`` while collecting type-ahead; True if Ctrl-C cancelled the wait.

        Ctrl-C also discards whatever was typed ahead before it.
        """
        import select

        from .keys import INTERRUPT

        if self._drop_through_interrupt(INTERRUPT):
            return True
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                return False
            outcome = self._collect_typed()
            if outcome is not None:
                return outcome

    def _collect_typed(self) -> bool | None:
        """Queue what was typed while busy: True when it held Ctrl-C (dropped, with what was typed before
        it), False when the terminal hung up, None to go on waiting."""
        from .keys import INTERRUPT

        data = self._read()
        if data is None:
            return False
        self.events.extend(self.decoder.feed(data))
        return True if self._drop_through_interrupt(INTERRUPT) else None

    def _drop_through_interrupt(self, interrupt: str) -> bool:
        for index, (kind, _) in enumerate(self.events):
            if kind == interrupt:
                for _ in range(index + 1):
                    self.events.popleft()
                return True
        return False


def _columns(fd: int) -> int:
    """The terminal's width; 80 when it cannot tell."""
    try:
        return os.get_terminal_size(fd).columns or 80
    except OSError:
        return 80


def _raw(mode: list) -> list:
    """Raw-mode terminal attributes derived from ``mode`` (what cfmakeraw does)."""
    import termios

    new = list(mode)
    new[6] = list(mode[6])
    new[0] &= ~(termios.IGNBRK | termios.BRKINT | termios.PARMRK | termios.ISTRIP | termios.INLCR
                | termios.IGNCR | termios.ICRNL | termios.IXON)
    new[1] &= ~termios.OPOST
    new[2] &= ~(termios.CSIZE | termios.PARENB)
    new[2] |= termios.CS8
    new[3] &= ~(termios.ECHO | termios.ECHONL | termios.ICANON | termios.ISIG | termios.IEXTEN)
    new[6][termios.VMIN] = 1
    new[6][termios.VTIME] = 0
    return new
