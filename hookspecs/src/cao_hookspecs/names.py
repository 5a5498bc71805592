"""The shapes of ids and names, shared by the kernel, the server and its client (upstream's rules).

Patterns end in ``\\Z``, not ``$``: ``$`` also matches before a trailing newline, which would let
``"deadbeef\\n"`` pass as a terminal id."""

from __future__ import annotations

import re

TERMINAL_ID_RE = re.compile(r"^[a-f0-9]{8}\Z")
SESSION_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}\Z")
PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
# tmux key names: arrows and named keys, single characters, and C-/M-/S- chords.
KEY_RE = re.compile(
    r"^(?:(?:[CMS]-)*(?:[A-Za-z0-9]|Up|Down|Left|Right|Enter|Tab|BTab|Escape|Space|BSpace|Home|End"
    r"|PageUp|PageDown|PPage|NPage|DC|IC|F[1-9]|F1[0-2]))\Z"
)
SESSION_PREFIX = "cao-"
MAX_INPUT_BYTES = 1024 * 1024


def json_pattern(rule: re.Pattern[str]) -> str:
    """A rule above as JSON Schema and OpenAPI write patterns (``$`` for ``\\Z``)."""
    return rule.pattern.removesuffix(r"\Z") + "$"


#: A terminal id as JSON Schema and OpenAPI write it.
TERMINAL_ID_PATTERN = json_pattern(TERMINAL_ID_RE)
