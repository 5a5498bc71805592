"""The input line being composed in raw mode: what was typed and pasted, and what the screen shows of it."""

from __future__ import annotations

from .contract import visible

# Pastes longer than this (or with a line break) are shown as a one-line placeholder, as agent TUIs do,
# so a 20 KiB message does not push the conversation off the screen.
PASTE_ECHO_LIMIT = 1000


def paste_placeholder(text: str) -> str:
    """How a multi-line or long paste is shown on the input line."""
    lines = text.count("\n") + 1
    return f"[Pasted text: {lines} line{'s' if lines != 1 else ''}, {len(text)} chars]"


class Composer:
    """An editable input line. Each method returns the text to write to the terminal to show the change.

    The line is a list of parts ``(text, shown)``: one per typed or short-pasted character, one per long
    paste, so Backspace removes one character or a whole placeholder.
    """

    def __init__(self) -> None:
        self._parts: list[tuple[str, str]] = []

    @property
    def text(self) -> str:
        """The input as it will be submitted."""
        return "".join(text for text, _ in self._parts)

    @property
    def shown(self) -> str:
        """The line as the screen shows it (long pastes as their placeholder)."""
        return "".join(shown for _, shown in self._parts)

    @property
    def empty(self) -> bool:
        return not self._parts

    def type(self, text: str) -> str:
        shown = [visible(ch, tab=False) for ch in text]
        self._parts.extend(zip(text, shown))
        return "".join(shown)

    def paste(self, text: str) -> str:
        if "\n" in text or len(text) > PASTE_ECHO_LIMIT:
            shown = paste_placeholder(text)
            self._parts.append((text, shown))
            return shown
        return self.type(text)

    def backspace(self) -> str:
        if not self._parts:
            return ""
        _, shown = self._parts.pop()
        cells = display_width(shown)
        return "\b" * cells + " " * cells + "\b" * cells

    def take(self) -> str:
        """Return the input and start a new, empty line."""
        text = self.text
        self._parts.clear()
        return text

    def clear(self) -> None:
        self._parts.clear()


def display_width(text: str) -> int:
    """Terminal cells ``text`` occupies: wide East Asian characters take two, combining marks none."""
    if text.isascii():
        return len(text)
    import unicodedata  # only needed when erasing non-ASCII text

    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width
