"""The shapes of ids and names, shared by the kernel, the server and its client (upstream's rules), and
the checks that apply them with one message each.

Patterns end in ``\\Z``, not ``$``: ``$`` also matches before a trailing newline, which would let
``"deadbeef\\n"`` pass as a terminal id."""

from __future__ import annotations

import re

from .errors import CaoError, InvalidInput

TERMINAL_ID_RE = re.compile(r"^[a-f0-9]{8}\Z")
SESSION_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}\Z")
PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
# tmux key names: arrows and named keys, single characters, and chords of up to three C-/M-/S- (what a
# terminal backend takes: tmux's own key names allow no more).
KEY_RE = re.compile(
    r"^(?:(?:[CMS]-){0,3}(?:[A-Za-z0-9]|Up|Down|Left|Right|Enter|Tab|BTab|Escape|Space|BSpace|Home|End"
    r"|PageUp|PageDown|PPage|NPage|DC|IC|F[1-9]|F1[0-2]))\Z"
)
# A delegation's call id: its retry with the same id resumes it instead of starting it again.
CALL_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,64}\Z")
# A prompt's id: its terminal's id and its number.
PROMPT_ID_RE = re.compile(r"^[0-9a-f]{8}-[1-9][0-9]{0,9}\Z")
MODEL_RE = re.compile(r"^[A-Za-z0-9._:/-]{1,128}\Z")
SESSION_PREFIX = "cao-"
#: The sessions of warm workers (pools), each holding one agent started ahead for a delegation.
POOL_SESSION_PREFIX = SESSION_PREFIX + "pool-"
# A session name as a caller may give it: the kernel adds ``cao-`` when it is missing, and the result must
# still be a session name, so an unprefixed name has four characters less room.
SESSION_ARG_RE = re.compile(r"^(?:cao-[A-Za-z0-9_-]{0,60}|[A-Za-z0-9_][A-Za-z0-9_-]{0,59})\Z")
MAX_INPUT_BYTES = 1024 * 1024
# An answer to an agent's prompt is typed into its dialog: a few lines, not a document.
MAX_ANSWER_CHARS = 4000
# What ``str.strip()`` removes (every ``str.isspace()`` character), spelled out so that a JSON pattern can
# say "not blank".
BLANK_CHARS = "\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Text typed into a terminal (a message, an answer): not blank, and no NUL, which no terminal can take.
TEXT_RE = re.compile(rf"^[{BLANK_CHARS}]*[^{BLANK_CHARS}\x00][^\x00]*\Z")


def json_pattern(rule: re.Pattern[str]) -> str:
    """A rule above as JSON Schema and OpenAPI write patterns (``$`` for ``\\Z``)."""
    return rule.pattern.removesuffix(r"\Z") + "$"


#: A terminal id as JSON Schema and OpenAPI write it.
TERMINAL_ID_PATTERN = json_pattern(TERMINAL_ID_RE)
CALL_ID_PATTERN = json_pattern(CALL_ID_RE)
PROMPT_ID_PATTERN = json_pattern(PROMPT_ID_RE)


def _checked(rule: re.Pattern[str], value: object, message: str, error: type[CaoError],
             what: str = "") -> str:
    # The message is formatted only for a refusal: these checks run on every call that names a terminal.
    if not isinstance(value, str) or not rule.match(value):
        raise error(message.format(value=value, what=what))
    return value


def terminal_id(value: object, *, what: str = "terminal id", error: type[CaoError] = InvalidInput) -> str:
    """``value`` when it is a terminal id, else ``error`` naming it as ``what``."""
    return _checked(TERMINAL_ID_RE, value, "invalid {what} {value!r}: expected 8 lowercase hex characters",
                    error, what)


def with_prefix(name: str) -> str:
    """``name`` as the kernel names the session: with ``SESSION_PREFIX`` (``team`` -> ``cao-team``)."""
    return name if name.startswith(SESSION_PREFIX) else SESSION_PREFIX + name


def session_name(value: object) -> str:
    """``value`` when it is a session name (without the ``cao-`` prefix rule), else ``InvalidInput``."""
    return _checked(SESSION_NAME_RE, value,
                    "invalid session name {value!r}: use letters, digits, '_' and '-' (not first), "
                    "at most 64", InvalidInput)


def profile_name(value: object) -> str:
    """``value`` when it is an agent profile name, else ``InvalidInput``."""
    return _checked(PROFILE_NAME_RE, value,
                    "invalid agent profile name {value!r}: use letters, digits, '_' and '-', at most 64",
                    InvalidInput)


def call_id(value: object) -> str:
    """``value`` when it is a call id, else ``InvalidInput``."""
    return _checked(CALL_ID_RE, value,
                    "invalid call id {value!r}: use letters, digits and . _ : - only, at most 64",
                    InvalidInput)


def key(value: object) -> str:
    """``value`` when it is a tmux key name, else ``InvalidInput``."""
    return _checked(KEY_RE, value,
                    "invalid key {value!r}: use a tmux key name such as Enter, Escape, Up, C-c", InvalidInput)
