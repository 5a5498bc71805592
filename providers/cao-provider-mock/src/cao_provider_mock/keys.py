"""Decoding what a terminal in raw mode sends into key events.

The decoder is fed raw bytes in whatever chunks ``read`` returns and yields the same events however the
bytes are split: a UTF-8 character, an escape sequence or a paste marker cut between two reads is held
back until the rest arrives.
"""

from __future__ import annotations

import codecs

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"

TEXT = "text"
PASTE = "paste"
ENTER = "enter"
BACKSPACE = "backspace"
INTERRUPT = "interrupt"
EOF = "eof"
# Keys only a prompt of a behaviour (``turn.ask``) reacts to; the input line ignores them.
UP = "up"
DOWN = "down"
ESCAPE = "escape"

Event = tuple[str, str]

_SINGLE_KEYS = {
    "\x7f": BACKSPACE,
    "\x08": BACKSPACE,
    "\x03": INTERRUPT,
    "\x04": EOF,
}


class KeyDecoder:
    """Turns terminal input into events ``(kind, text)``.

    Kinds: ``text`` (typed characters, merged per chunk), ``paste`` (everything between the bracketed
    paste markers, verbatim except that CR LF and lone CR become LF), ``enter`` (CR or LF outside a
    paste; CR LF counts once), ``backspace`` (DEL or BS), ``interrupt`` (Ctrl-C), ``eof`` (Ctrl-D),
    ``up`` and ``down`` (the arrow keys, in either cursor mode) and ``escape``: an ESC followed by
    anything but ``[`` or ``O`` (that character is then decoded normally, so Alt+key still types the
    key). An ESC that ends the input so far is held back, as the start of a sequence may be; a reader
    that sees nothing follow it soon takes it as the Esc key with :meth:`KeyDecoder.lone_escape`.
    Other control characters and escape sequences (other keys, focus reports...) are dropped.
    """

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._held = ""
        self._paste: list[str] | None = None
        self._after_cr = False

    @property
    def in_paste(self) -> bool:
        """True between a paste's start marker and its end marker."""
        return self._paste is not None

    @property
    def holds_escape(self) -> bool:
        """True when the input so far ends with an ESC that may still start a sequence."""
        return self._held == "\x1b" and self._paste is None

    def lone_escape(self) -> list[Event]:
        """The held ESC as the Esc key (call it when no byte followed it for a while)."""
        if not self.holds_escape:
            return []
        self._held = ""
        self._after_cr = False
        return [(ESCAPE, "")]

    def feed(self, data: bytes) -> list[Event]:
        """Decode one chunk; returns the events it completes."""
        text = self._held + self._utf8.decode(data)
        self._held = ""
        events: list[Event] = []
        typed: list[str] = []
        i, n = 0, len(text)
        while i < n:
            if self._paste is not None:
                end = text.find(PASTE_END, i)
                if end < 0:
                    keep = _marker_prefix_at_end(text, i, PASTE_END)
                    self._paste.append(text[i:n - keep])
                    self._held = text[n - keep:]
                    break
                self._paste.append(text[i:end])
                events.append((PASTE, _normalise_newlines("".join(self._paste))))
                self._paste = None
                i = end + len(PASTE_END)
                continue
            ch = text[i]
            if ch == "\x1b":
                length = _escape_length(text, i)
                if length is None:
                    self._held = text[i:]
                    break
                if text.startswith(PASTE_START, i):
                    _flush_typed(typed, events)
                    self._paste = []
                else:
                    key = _KEYS.get(text[i + 1:i + length]) if length > 1 else ESCAPE
                    if key is not None:
                        _flush_typed(typed, events)
                        events.append((key, ""))
                self._after_cr = False
                i += length
                continue
            after_cr, self._after_cr = self._after_cr, False
            if ch == "\r":
                _flush_typed(typed, events)
                events.append((ENTER, ""))
                self._after_cr = True
            elif ch == "\n":
                if not after_cr:
                    _flush_typed(typed, events)
                    events.append((ENTER, ""))
            elif ch in _SINGLE_KEYS:
                _flush_typed(typed, events)
                events.append((_SINGLE_KEYS[ch], ""))
            elif ch == "\t" or not _is_control(ch):
                typed.append(ch)
            i += 1
        _flush_typed(typed, events)
        return events


_KEYS = {"[A": UP, "OA": UP, "[B": DOWN, "OB": DOWN}


def _flush_typed(typed: list[str], events: list[Event]) -> None:
    if typed:
        events.append((TEXT, "".join(typed)))
        typed.clear()


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code < 0xA0


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _marker_prefix_at_end(text: str, start: int, marker: str) -> int:
    """Length of the longest tail of ``text[start:]`` that is a proper prefix of ``marker``."""
    for size in range(min(len(marker) - 1, len(text) - start), 0, -1):
        if marker.startswith(text[len(text) - size:]):
            return size
    return 0


def _escape_length(text: str, i: int) -> int | None:
    """Length of the escape sequence starting at ``text[i]`` (an ESC), or None if it is incomplete."""
    n = len(text)
    if i + 1 >= n:
        return None
    kind = text[i + 1]
    if kind == "O":
        return 3 if i + 2 < n else None
    if kind != "[":
        return 1
    j = i + 2
    # CSI: parameter bytes, then intermediate bytes, then one final byte.
    while j < n and "0" <= text[j] <= "?":
        j += 1
    while j < n and " " <= text[j] <= "/":
        j += 1
    if j >= n:
        return None
    if "@" <= text[j] <= "~":
        return j + 1 - i
    # Malformed: drop what was read of it and decode the odd character normally.
    return j - i
