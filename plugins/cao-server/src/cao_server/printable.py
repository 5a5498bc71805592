"""Text from requests and agents made safe to print: to the operator's terminal or into the log."""

from __future__ import annotations

import re

# Control characters (C0, DEL, C1), and the format characters that reorder or hide text, plus the
# line and paragraph separators: printed raw they forge log lines or drive the reader's terminal.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every unsafe character written as a visible escape (``\\x1b``, ``\\u202e``)."""
    return _UNSAFE.sub(lambda c: f"\\x{ord(c[0]):02x}" if ord(c[0]) < 0x100 else f"\\u{ord(c[0]):04x}", text)


__all__ = ["printable"]
