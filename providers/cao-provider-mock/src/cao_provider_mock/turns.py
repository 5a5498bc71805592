"""Running a behaviour's turns: the ``Turn`` a behaviour receives and the host that runs it.

Turns run one at a time on an event loop in a background thread, which keeps the MCP connections
alive between turns; the program's main thread keeps reading the terminal (Ctrl-C cancels a turn).
Loaded with the first turn, not at start-up.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .contract import (
    BEHAVIOUR_ERROR_PREFIX,
    NO_ANSWER_LINE,
    TRACE_PREFIX,
    TRACE_RESULT_PREFIX,
    answer_rows,
    visible,
)

if TYPE_CHECKING:
    from .asking import Ask, Choice
    from .behaviours import Behaviour

    #: A prompt the turn opened, and how to give it its answer (callable from any thread).
    Pending = tuple[Ask, Callable[[Choice], None]]

# The protocol lines cao puts at the end of tasks and messages (upstream's wording, see
# cao_kernel.orchestration). Each stands on a line of its own; several messages from one sender may
# arrive as one input, each ending with its line.
PROTOCOL_LINE_RE = re.compile(
    r"^[ \t]*(?:\[Assigned by terminal (?P<assigned>[0-9a-f]{8})\. When done, send results back to terminal "
    r"(?P=assigned) using send_message\]|\[Message from terminal (?P<sender>[0-9a-f]{8})\. Use send_message MCP "
    r"tool for any follow-up work\.\])[ \t]*$",
    re.MULTILINE,
)
TRACE_WIDTH = 160
# A failure row may be longer (it wraps on screen): its message often ends with the file to look at.
FAILURE_WIDTH = 600

ASSIGNED = "assign"
MESSAGE = "message"
INPUT = "input"


class Incoming:
    """One message within an input: its ``text`` (protocol line removed), its ``kind`` (``assign``: a
    task from assign, ``message``: an inbox message, ``input``: anything typed without a protocol line)
    and ``sender``, the terminal that sent it (None for plain input)."""

    __slots__ = ("text", "kind", "sender")

    def __init__(self, text: str, kind: str, sender: str | None) -> None:
        self.text = text
        self.kind = kind
        self.sender = sender

    def __repr__(self) -> str:
        return f"Incoming({self.text!r}, {self.kind!r}, {self.sender!r})"


def split_input(text: str) -> list[Incoming]:
    """The messages of one input, in order: each ends at a protocol line; text after the last protocol
    line (or an input with none) is plain input. Never empty."""
    found: list[Incoming] = []
    start = 0
    for match in PROTOCOL_LINE_RE.finditer(text):
        kind = ASSIGNED if match.group("assigned") else MESSAGE
        found.append(Incoming(text[start:match.start()].strip(), kind, match.group("assigned") or match.group("sender")))
        start = match.end()
    rest = text[start:].strip()
    if rest or not found:
        found.append(Incoming(rest, INPUT, None))
    return found


class Turn:
    """One input to a behaviour, and what the behaviour may do about it.

    - ``text``: the input as typed or pasted;
    - ``messages``: the :class:`Incoming` messages it holds (cao types consecutive messages from one
      sender as one input); ``task``, ``assigned_by`` and ``message_from`` describe the last of them:
      its text without cao's protocol line, the supervisor's terminal id when it is an assigned task
      (its callback line), the sender's terminal id when it is an inbox message; ``reply_to``: either;
    - ``memory``: a dict kept for the agent's life, ``number``: 1 for the first turn;
    - ``terminal_id``: this agent's own terminal id (``CAO_TERMINAL_ID``), or None outside cao;
    - ``await turn.call(tool, **args)``: call an MCP tool of the agent's servers and get its result;
    - ``await turn.think(seconds)``: stay busy; ``turn.say(text)``: print a progress row;
    - ``await turn.ask(...)``: show a prompt and wait for the person's answer (see ``asking``).
    """

    def __init__(self, text: str, number: int, memory: dict[str, Any], host: BehaviourHost) -> None:
        self.text = text
        self.number = number
        self.memory = memory
        self.terminal_id = os.environ.get("CAO_TERMINAL_ID") or None
        self._host = host
        self.messages = split_input(text)
        last = self.messages[-1]
        self.task = last.text
        self.assigned_by = last.sender if last.kind == ASSIGNED else None
        self.message_from = last.sender if last.kind == MESSAGE else None

    @property
    def reply_to(self) -> str | None:
        return self.assigned_by or self.message_from

    async def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call MCP tool ``tool``; returns its JSON result (or text). Raises ``ToolError`` on failure."""
        self.say(f"{tool}({_brief_args(arguments)})")
        try:
            result = await self._host.connections().call(tool, arguments)
        except Exception as exc:
            self._host.row(TRACE_RESULT_PREFIX + _one_line(f"failed: {exc}"))
            raise
        self._host.row(TRACE_RESULT_PREFIX + _one_line(_brief(result)))
        return result

    async def think(self, seconds: float) -> None:
        """Stay busy for ``seconds`` (the agent reads as processing meanwhile)."""
        await asyncio.sleep(seconds)

    def say(self, text: str) -> None:
        """Print one progress row (shown on the agent's screen; never read as an answer)."""
        self._host.row(TRACE_PREFIX + _one_line(text))

    async def ask(self, question: str | None = None, options: Any = None, *, tool: str | None = None,
                  arguments: dict[str, Any] | None = None, kind: str | None = None) -> Choice:
        """Show a prompt and wait until it is answered; returns the :class:`~.asking.Choice`.

        With a ``tool`` (kind ``permission``): ``Allow <tool>(<arguments>)?`` with the options yes, yes
        and don't ask again for the tool, and no with a text field. Without one (kind ``question``):
        ``question`` with ``options`` (strings or ``asking.Option``). The turn stays waiting on the
        person meanwhile; once answered, the question and the answer stay on screen as progress rows.
        """
        from .asking import build_ask

        request = build_ask(question, options, tool=tool, arguments=arguments, kind=kind)
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[Choice] = loop.create_future()

        def settle(choice: Choice) -> None:
            if not answered.done():
                answered.set_result(choice)

        self._host.open_prompt(request, lambda choice: loop.call_soon_threadsafe(settle, choice))
        choice = await answered
        self.say(request.question)
        said = f"{choice.number}. {choice.label}" + (f": {choice.text}" if choice.text is not None else "")
        self._host.row(TRACE_RESULT_PREFIX + _one_line(said))
        return choice


class BehaviourHost:
    """Runs one behaviour's turns, one at a time, on an event loop in a background thread.

    ``write`` prints one finished row (the caller supplies the line ending its terminal mode needs);
    it is called from the loop thread while a turn runs, when the main thread prints nothing.
    """

    def __init__(self, behaviour: Behaviour, mcp_config: str | None, write: Callable[[str], None],
                 connected: Any = None) -> None:
        self.behaviour = behaviour
        self.mcp_config = mcp_config
        # Servers connected at start-up (``agent.EarlyConnections``), used as they are.
        self.connected = connected
        self.memory: dict[str, Any] = {}
        self.turns = 0
        self._write = write
        self._muted = False
        self._connections: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._prompt_lock = threading.Lock()
        self._pending: Pending | None = None
        self._prompt_opened: Callable[[], None] | None = None

    def open_prompt(self, ask: Ask, answer: Callable[[Choice], None]) -> None:
        """Called by a turn (loop thread): hand the prompt to whoever reads the keys."""
        opened = self._prompt_opened
        if opened is None:
            raise RuntimeError("this mock_cli reads no answers: a behaviour can ask only in mock_cli")
        with self._prompt_lock:
            self._pending = (ask, answer)
        opened()

    def take_prompt(self) -> Pending | None:
        """The prompt a turn opened and nobody took yet (main thread), or None."""
        with self._prompt_lock:
            pending, self._pending = self._pending, None
        return pending

    def row(self, text: str) -> None:
        if not self._muted:
            self._write(text)

    def connections(self) -> Any:
        if self._connections is None:
            from .mcp_client import McpConnections

            clients = self.connected.clients() if self.connected is not None else None
            self._connections = McpConnections.from_file(self.mcp_config, clients)
        return self._connections

    def _start(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="mock-behaviour", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop

    def submit(self, text: str, prompt_opened: Callable[[], None] | None = None
               ) -> concurrent.futures.Future[str | None]:
        """Start a turn for ``text``; the future holds the behaviour's answer (or its exception).

        ``prompt_opened`` is called (from the loop thread) each time the turn opens a prompt; the
        caller then takes it with :meth:`take_prompt` and answers it. Without it, asking fails the turn.
        """
        loop = self._start()
        self.turns += 1
        self._muted = False
        self._prompt_opened = prompt_opened
        self.take_prompt()
        turn = Turn(text, self.turns, self.memory, self)

        async def run() -> str | None:
            answer = await self.behaviour(turn)
            if answer is not None and not isinstance(answer, str):
                answer = str(answer)
            return answer

        return asyncio.run_coroutine_threadsafe(run(), loop)

    def cancel(self, future: concurrent.futures.Future[Any]) -> None:
        """Cancel the running turn; it prints nothing more (the caller prints the ``^C``)."""
        # Muted first: the turn may still be printing a row from the loop thread while it unwinds.
        self._muted = True
        future.cancel()
        self.take_prompt()

    def close(self, timeout: float = 2.0) -> None:
        """Close the MCP connections (their servers exit) and stop the loop thread."""
        loop = self._loop
        if loop is None:
            return
        self._muted = True
        if self._connections is not None:
            done = asyncio.run_coroutine_threadsafe(self._connections.aclose(), loop)
            try:
                done.result(timeout=timeout)
            except BaseException:  # noqa: BLE001 - exiting anyway; the servers see their stdin close
                pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout)
            if not self._thread.is_alive():
                loop.close()
        self._loop = self._thread = None


def turn_rows(future: concurrent.futures.Future[str | None]) -> list[str]:
    """The rows that end a finished turn: its answer, the no-answer row, or the failure row."""
    try:
        answer = future.result()
    except Exception as exc:  # noqa: BLE001 - any failure of a behaviour is shown, never raised
        return [BEHAVIOUR_ERROR_PREFIX + describe_failure(exc)]
    if answer is None:
        return [NO_ANSWER_LINE]
    return answer_rows(answer)


def describe_failure(exc: BaseException) -> str:
    """The text after ``ERROR: mock behaviour failed: `` for a behaviour that raised ``exc``."""
    detail = str(exc).strip()
    name = type(exc).__name__
    return _one_line(f"{name}: {detail}" if detail else name, FAILURE_WIDTH)


def _one_line(text: str, width: int = TRACE_WIDTH) -> str:
    flat = visible(" \u23ce ".join(str(text).splitlines()) or "", tab=False)
    return flat if len(flat) <= width else flat[:width - 1] + "\u2026"


def _brief(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _brief_args(arguments: dict[str, Any]) -> str:
    parts = []
    for key, value in arguments.items():
        shown = repr(value)
        parts.append(f"{key}={shown if len(shown) <= 40 else shown[:39] + chr(0x2026)}")
    return ", ".join(parts)
