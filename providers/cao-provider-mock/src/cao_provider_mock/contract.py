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

# Scripted behaviours (see behaviours.py). An answer of several lines is drawn as the usual first row
# plus one row per further line, each starting with ANSWER_CONTINUATION: a row without it is a wrapped
# part of the row above, so the extractor can tell line breaks from wrapping.
ANSWER_CONTINUATION = "\u2502"
# A turn whose behaviour returned no answer still gets a visible end, so it reads as completed.
NO_ANSWER_LINE = "\u25cb turn ended without an answer"
# Progress rows a behaviour prints while it works (its tool calls, its notes).
TRACE_PREFIX = "\u23fa "
TRACE_RESULT_PREFIX = "  \u23bf "
# Every row that marks a failed turn starts with this: the injected failure and a failed behaviour.
ERROR_PREFIX = "ERROR: mock "
BEHAVIOUR_ERROR_PREFIX = "ERROR: mock behaviour failed: "

# Prompts a behaviour raises (``turn.ask``, see asking.py): the key hint that ends each kind, the mark
# after an option that takes text (and before its text field), the indent of an option's description.
PERMISSION_HINT = "Enter to confirm \u00b7 Esc to cancel"
QUESTION_HINT = "Enter to select \u00b7 Esc to cancel"
TEXT_HINT = "Enter to send \u00b7 Esc to go back"
TEXT_MARK = "\u270e"
DESCRIPTION_INDENT = "     "

# Shown between the lines of a multi-line input in its one-line reply.
LINE_JOINER = " \u23ce "

EMPTY = "empty"
EXIT = "exit"
ANSWER = "answer"


class Reaction:
    """What the program does with one submitted input.

    ``kind`` is ``empty`` (reprint the prompt), ``exit`` (print ``line`` and quit) or ``answer`` (wait
    ``wait`` seconds, print ``line``, then the prompt). ``ordinary`` is true for an input that is no
    command: the one a scripted behaviour answers instead of the echo.
    """

    __slots__ = ("kind", "line", "wait", "ordinary")

    def __init__(self, kind: str, line: str = "", wait: float = 0.0, *, ordinary: bool = False) -> None:
        self.kind = kind
        self.line = line
        self.wait = wait
        self.ordinary = ordinary

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
    return Reaction(ANSWER, REPLY_PREFIX + reply_payload(text), delay, ordinary=True)


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


def answer_rows(answer: str) -> list[str]:
    """The screen rows that show a behaviour's ``answer``; ``screen.extract_last_message`` reads it back.

    The first line follows ``> MOCK: ``; every further line gets a row of its own starting with
    ``ANSWER_CONTINUATION`` and a space. Control characters are made visible as in echoed answers, a
    tab becomes one space and blanks at the end of a line are dropped (a terminal does not keep them),
    so the extractor returns exactly ``shown_answer(answer)``.
    """
    first, *rest = shown_answer(answer).split("\n")
    return [REPLY_PREFIX + first, *(f"{ANSWER_CONTINUATION} {line}".rstrip() for line in rest)]


def shown_answer(answer: str) -> str:
    """``answer`` as the screen can hold it: line breaks normalised, control characters visible, tabs as
    one space, no blanks at the ends of lines. Equal to ``answer`` for plain printable text."""
    lines = answer.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(visible(line, tab=False).rstrip() for line in lines)


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
