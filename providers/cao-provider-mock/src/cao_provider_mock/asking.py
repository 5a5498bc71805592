"""Prompts a behaviour raises with ``await turn.ask(...)``: how they are drawn and how keys answer them.

A prompt is drawn at the bottom of the screen, under a blank row, while the turn waits::

                                                         (blank row)
    Allow Bash(rm -rf build)?                            the question, wrapped by mock_cli itself
    ❯ 1. Yes                                             ❯ marks the option Enter takes
      2. Yes, and don't ask again for Bash
      3. No, and tell the agent what to do differently ✎ ✎: picking it opens a text field
    Enter to confirm · Esc to cancel                     the key hint ("Enter to select" for a question)

A question's options may carry a description, drawn on rows of their own indented by five blanks. A
digit picks its option at once; Up and Down move the ❯, Enter picks the option under it; Esc picks the
last option (a permission's refusal) with no text. A paste picks only when it is an option's digit
alone. An option marked ✎ opens a text field instead::

    Allow Bash(rm -rf build)?
      3. No, and tell the agent what to do differently ✎
    ✎ <what is typed or pasted>
    Enter to send · Esc to go back

where Enter gives the option with the text, Esc goes back to the menu. Ctrl-C cancels the whole turn.
Once answered, the prompt is erased: nothing of it stays on screen to be read as open.

mock_cli wraps the question and descriptions itself, never at a blank, so a reader joining the rows
gets the text back exactly; option labels are cut to the width. Loaded with the first prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .composer import Composer, display_width
from .contract import (
    DESCRIPTION_INDENT,
    PERMISSION_HINT,
    PROMPT_GLYPH,
    QUESTION_HINT,
    TEXT_HINT,
    TEXT_MARK,
    visible,
)
from .keys import BACKSPACE, DOWN, ENTER, ESCAPE, PASTE, TEXT, UP

PERMISSION = "permission"
QUESTION = "question"
KINDS = (PERMISSION, QUESTION)
#: One key per option: the digits 1 to 9.
MAX_OPTIONS = 9
REFUSAL = "No, and tell the agent what to do differently"


class Option:
    """One option of a prompt: its ``label``, an optional ``description`` (drawn under it), and whether
    picking it opens a text field (``takes_text``)."""

    __slots__ = ("description", "label", "takes_text")

    def __init__(self, label: str, description: str = "", *, takes_text: bool = False) -> None:
        self.label = _one_line(label)
        self.description = _one_line(description)
        self.takes_text = bool(takes_text)
        if not self.label:
            raise ValueError("an option needs a label")

    def __repr__(self) -> str:
        return f"Option({self.label!r}, {self.description!r}, takes_text={self.takes_text})"


class Choice:
    """What the person picked: the option's ``number`` (from 1) and ``label``, and the ``text`` typed in
    its text field (None for an option that takes none, or when Esc refused)."""

    __slots__ = ("label", "number", "text")

    def __init__(self, number: int, label: str, text: str | None = None) -> None:
        self.number = number
        self.label = label
        self.text = text

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Choice)
                and (self.number, self.label, self.text) == (other.number, other.label, other.text))

    def __hash__(self) -> int:
        return hash((self.number, self.label, self.text))

    def __repr__(self) -> str:
        return f"Choice({self.number}, {self.label!r}, {self.text!r})"


class Ask:
    """A prompt as a behaviour asked it (built by :func:`build_ask`)."""

    __slots__ = ("arguments", "kind", "options", "question", "tool")

    def __init__(self, kind: str, question: str, options: tuple[Option, ...], tool: str | None,
                 arguments: dict[str, str]) -> None:
        self.kind = kind
        self.question = question
        self.options = options
        self.tool = tool
        self.arguments = arguments

    @property
    def hint(self) -> str:
        return PERMISSION_HINT if self.kind == PERMISSION else QUESTION_HINT


def build_ask(question: str | None = None, options: Iterable[str | Option] | None = None, *,
              tool: str | None = None, arguments: Mapping[str, Any] | None = None,
              kind: str | None = None) -> Ask:
    """Check what a behaviour asks and fill in the defaults.

    ``kind`` is ``permission`` when a ``tool`` is named, else ``question``. A permission's question is
    always ``Allow <tool>(<arguments>)?`` (readers take the tool and its arguments from it), so it takes
    no ``question``; its options default to yes, yes and don't ask again, and no with a text field.
    A question needs its text and at least two options.
    """
    kind = kind or (PERMISSION if tool else QUESTION)
    if kind not in KINDS:
        raise ValueError(f"a prompt's kind is one of {', '.join(KINDS)}, not {kind!r}")
    shown_args = {str(k): _one_line(str(v)) for k, v in (arguments or {}).items()}
    if kind == PERMISSION:
        if not tool or not _one_line(tool) or any(ch in tool for ch in "() "):
            raise ValueError(f"a permission prompt needs a tool name without blanks or brackets, "
                             f"got {tool!r}")
        if question is not None:
            raise ValueError("a permission prompt's question is drawn from its tool and arguments; give none")
        question = f"Allow {tool}({shown_arguments(shown_args)})?"
        if options is None:
            options = [Option("Yes"), Option(f"Yes, and don't ask again for {tool}"),
                       Option(REFUSAL, takes_text=True)]
    elif not question or not _one_line(question):
        raise ValueError("a question prompt needs its question")
    made = tuple(item if isinstance(item, Option) else Option(str(item)) for item in options or ())
    if not 2 <= len(made) <= MAX_OPTIONS:
        raise ValueError(f"a prompt offers 2 to {MAX_OPTIONS} options (one digit each), got {len(made)}")
    return Ask(kind, _one_line(question), made, tool, shown_args)


def shown_arguments(arguments: Mapping[str, str]) -> str:
    """A tool's arguments as the permission question shows them: a lone ``command`` bare (a shell
    tool's ``rm -rf build``), anything else as ``name=value`` pairs joined by ``, ``."""
    if list(arguments) == ["command"]:
        return arguments["command"]
    return ", ".join(f"{name}={value}" for name, value in arguments.items())


def _one_line(text: str) -> str:
    return visible(" \u23ce ".join(str(text).split("\n")), tab=False).strip()


def wrap(text: str, width: int) -> list[str]:
    """``text`` cut into rows of at most ``width`` cells, never ending a row with a blank (a captured
    screen drops those), so joining the rows gives ``text`` back."""
    width = max(width, 2)
    rows: list[str] = []
    rest = text
    while display_width(rest) > width:
        cut = _fit(rest, width)
        while cut > 1 and rest[cut - 1] == " ":
            cut -= 1
        rows.append(rest[:cut])
        rest = rest[cut:]
    rows.append(rest)
    return rows


def _fit(text: str, width: int) -> int:
    used = 0
    for index, ch in enumerate(text):
        used += display_width(ch)
        if used > width:
            return max(index, 1)
    return len(text)


def _cut(text: str, width: int) -> str:
    if display_width(text) <= width:
        return text
    return text[:_fit(text, width - 1)] + "\u2026"


class PromptState:
    """One open prompt: its cursor, its text field, and what each key does to them."""

    def __init__(self, ask: Ask) -> None:
        self.ask = ask
        self.cursor = 1
        # The option whose text field is open, or None while the menu shows.
        self.typing: int | None = None
        self.field = Composer()

    def rows(self, width: int) -> list[str]:
        """The screen rows of the prompt as it stands, the blank row above it first."""
        ask = self.ask
        rows = ["", *wrap(ask.question, width)]
        if self.typing is not None:
            option = ask.options[self.typing - 1]
            rows.append(_cut(f"  {self.typing}. {option.label} {TEXT_MARK}", width))
            rows.append(f"{TEXT_MARK} {self.field.shown}")
            rows.append(TEXT_HINT)
            return rows
        for number, option in enumerate(ask.options, 1):
            mark = PROMPT_GLYPH if number == self.cursor else " "
            label = f"{option.label} {TEXT_MARK}" if option.takes_text else option.label
            rows.append(_cut(f"{mark} {number}. {label}", width))
            if option.description:
                indent = len(DESCRIPTION_INDENT)
                rows += [DESCRIPTION_INDENT + row for row in wrap(option.description, width - indent)]
        rows.append(ask.hint)
        return rows

    def feed(self, kind: str, text: str) -> tuple[Choice | None, list[tuple[str, str]]]:
        """Apply one key event; returns the choice it made (or None) and, when it made one, the events
        left over from a burst of typed text (to be read as input typed ahead of the next prompt)."""
        if kind == TEXT:
            for index, ch in enumerate(text):
                choice = self._char(ch)
                if choice is not None:
                    rest = text[index + 1:]
                    return choice, [(TEXT, rest)] if rest else []
            return None, []
        if self.typing is not None:
            return self._field_key(kind, text), []
        if kind == UP:
            self.cursor = max(1, self.cursor - 1)
        elif kind == DOWN:
            self.cursor = min(len(self.ask.options), self.cursor + 1)
        elif kind == ENTER:
            return self._pick(self.cursor), []
        elif kind == ESCAPE:
            last = len(self.ask.options)
            return Choice(last, self.ask.options[last - 1].label), []
        elif kind == PASTE and text.strip() in self._digits():
            # An answer pasted on its own (an older client pastes it, then presses Enter) picks; any
            # other paste (a message typed in at the wrong time, holding digits) never does.
            return self._pick(int(text.strip())), []
        return None, []

    def _digits(self) -> set[str]:
        return {str(number) for number in range(1, len(self.ask.options) + 1)}

    def _char(self, ch: str) -> Choice | None:
        if self.typing is not None:
            self.field.type(ch)
            return None
        if "1" <= ch <= "9" and int(ch) <= len(self.ask.options):
            return self._pick(int(ch))
        return None

    def _pick(self, number: int) -> Choice | None:
        option = self.ask.options[number - 1]
        if option.takes_text:
            self.cursor = self.typing = number
            self.field.clear()
            return None
        return Choice(number, option.label)

    def _field_key(self, kind: str, text: str) -> Choice | None:
        if kind == PASTE:
            self.field.paste(text)
        elif kind == BACKSPACE:
            self.field.backspace()
        elif kind == ENTER:
            number = self.typing or 1
            return Choice(number, self.ask.options[number - 1].label, self.field.text)
        elif kind == ESCAPE:
            self.typing = None
        return None


def physical_rows(rows: list[str], width: int) -> int:
    """How many terminal rows ``rows`` take at ``width`` columns, each starting on a row of its own."""
    width = max(width, 1)
    return sum(max(1, -(-display_width(row) // width)) for row in rows)


def draw(rows: list[str]) -> str:
    """What to write to draw ``rows`` from the start of an empty row; the cursor ends on the last row."""
    return "\r\n".join(rows)


def erase(rows: list[str], width: int) -> str:
    """What to write, after :func:`draw` of ``rows``, to clear them and put the cursor where drawing
    began."""
    up = physical_rows(rows, width) - 1
    return "\r" + (f"\x1b[{up}A" if up else "") + "\x1b[J"


def lines_answer(ask: Ask, lines: Iterable[str]) -> Choice:
    """The answer to a prompt from input lines (mock_cli without a terminal): an option's number, or an
    empty line for the first; then, for an option that takes text, the next line is its text. Lines
    that are neither are skipped; running out of input refuses (the last option, no text)."""
    source = iter(lines)
    for line in source:
        line = line.strip()
        number = 1 if not line else int(line) if line.isascii() and line.isdigit() else 0
        if not 1 <= number <= len(ask.options):
            continue
        option = ask.options[number - 1]
        if not option.takes_text:
            return Choice(number, option.label)
        return Choice(number, option.label, next(source, "").rstrip("\n"))
    last = len(ask.options)
    return Choice(last, ask.options[last - 1].label)
