"""What mock_cli shows and how it answers: the strings other code and tests match on, and the reply rule.

This module is imported by the agent program at start-up, so it stays stdlib-only and cheap.
"""

from __future__ import annotations

VERSION = "0.1.0"
BANNER = "MockCli ready."
PROMPT_GLYPH = "\u276f"
PROMPT = PROMPT_GLYPH + " "
REPLY_PREFIX = "> MOCK: "
ERROR_LINE = "ERROR: mock failure injected"
GOODBYE = "goodbye"
EXIT_COMMANDS = ("/exit", "/quit")
ERROR_COMMAND = "__mock_error__"
SLEEP_COMMAND = "__mock_sleep_"
DEFAULT_DELAY_MS = 50

# Shown between the lines of a multi-line input in its one-line reply.
LINE_JOINER = " \u23ce "

EMPTY = "empty"
EXIT = "exit"
ANSWER = "answer"


class Reaction:
    """What the program does with one submitted input.

    ``kind`` is ``empty`` (reprint the prompt), ``exit`` (print ``line`` and quit) or ``answer`` (wait
    ``wait`` seconds, print ``line``, then the prompt).
    """

    __slots__ = ("kind", "line", "wait")

    def __init__(self, kind: str, line: str = "", wait: float = 0.0) -> None:
        self.kind = kind
        self.line = line
        self.wait = wait

    def __repr__(self) -> str:
        return f"Reaction({self.kind!r}, {self.line!r}, wait={self.wait!r})"


def react(text: str, delay: float) -> Reaction:
    """Decide the reaction to one input. ``delay`` is the reply delay in seconds.

    Commands are recognised with surrounding blanks ignored; an input of blanks only counts as empty.
    """
    command = text.strip()
    if not command:
        return Reaction(EMPTY)
    if command in EXIT_COMMANDS:
        return Reaction(EXIT, GOODBYE)
    if command == ERROR_COMMAND:
        return Reaction(ANSWER, ERROR_LINE)
    if command.startswith(SLEEP_COMMAND):
        label = command[len(SLEEP_COMMAND):]
        seconds = sleep_seconds(label)
        if seconds is not None:
            return Reaction(ANSWER, f"{REPLY_PREFIX}slept {label}s", seconds)
    return Reaction(ANSWER, REPLY_PREFIX + reply_payload(text), delay)


def sleep_seconds(label: str) -> float | None:
    """``label`` as seconds when it is a plain non-negative decimal (``2``, ``0.5``, ``.5``), else None.

    Exponents, signs, ``inf`` and ``nan`` are refused so a typo can never mean "sleep forever".
    """
    if label.isascii() and label.replace(".", "", 1).isdigit():
        return float(label)
    return None


def reply_payload(text: str) -> str:
    """The text after ``> MOCK: `` in the reply to input ``text``; always a single line.

    A single-line input is answered with itself. A multi-line input (it can only arrive as a paste) is
    answered with its lines joined by `` ⏎ `` followed by ``[<n> lines, <c> chars]``, where ``c`` counts
    the characters of the whole input, newlines included. Control characters other than tab are shown
    in caret notation (``^[`` for ESC) so an answer can never drive the terminal.
    """
    if "\n" not in text:
        return visible(text, tab=True)
    lines = text.split("\n")
    joined = LINE_JOINER.join(visible(line, tab=True) for line in lines)
    return f"{joined} [{len(lines)} lines, {len(text)} chars]"


def visible(text: str, *, tab: bool) -> str:
    """``text`` with control characters made harmless: tab kept when ``tab`` else one space, other C0
    characters and DEL in caret notation, C1 characters as ``?``."""
    if text.isprintable() and (tab or "\t" not in text):
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\t":
            out.append("\t" if tab else " ")
        elif code < 0x20 or code == 0x7F:
            out.append("^" + chr(code ^ 0x40))
        elif 0x80 <= code < 0xA0:
            out.append("?")
        else:
            out.append(ch)
    return "".join(out)
