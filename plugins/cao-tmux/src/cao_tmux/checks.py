"""Validation of everything callers hand the backend: each failure raises ``InvalidInput`` naming it."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from cao_hookspecs import names
from cao_hookspecs.errors import InvalidInput

if TYPE_CHECKING:
    from cao_hookspecs import TerminalLaunch

# tmux silently rewrites '.' and ':' in session names, and '#' would be expanded as a format.
_SESSION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,127}\Z")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# A tmux key: optional C-/M-/S- modifiers, then a key name (Enter, F12, BSpace...) or one printable
# ASCII character. Nothing with whitespace or control characters gets through.
_KEY = re.compile(r"(?:[CMS]-){0,3}(?:[A-Za-z][A-Za-z0-9]{0,15}|[!-~])\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MARK = re.compile(r"[A-Za-z0-9.:_-]{1,128}\Z")
MAX_SIZE = 10000


terminal_id = names.terminal_id


def session_name(value: object) -> str:
    """A tmux session name tmux keeps as given (letters, digits, '_' and '-', at most 128)."""
    if not isinstance(value, str) or not _SESSION_NAME.match(value):
        raise InvalidInput(
            f"invalid session name {value!r}: use 1-128 letters, digits, '_' or '-', not starting with '-'"
        )
    return value


def window_name(value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > 200 or _CONTROL.search(value):
        raise InvalidInput(
            f"invalid window name {value!r}: expected 1-200 characters without control characters"
        )
    return value


def key(value: object) -> str:
    """One tmux key name (``Enter``, ``C-c``, ``M-Up``, ``y``...)."""
    if not isinstance(value, str) or not _KEY.match(value):
        raise InvalidInput(
            f"invalid key {value!r}: expected a tmux key name such as Enter, Escape, Up, C-c or one character"
        )
    return value


def keys(values: Sequence[str]) -> list[str]:
    if isinstance(values, str):
        raise InvalidInput(f"keys must be a sequence of key names, not the string {values!r}")
    return [key(v) for v in values]


def mark(value: object) -> str | None:
    """An input mark: None, or 1 to 128 letters, digits and ``.:_-`` (it goes inside a tmux command)."""
    if value is None:
        return None
    if not isinstance(value, str) or not _MARK.match(value):
        raise InvalidInput(f"input mark must be 1 to 128 letters, digits or '.:_-', not {value!r}")
    return value


def history(value: object) -> int | None:
    """``None``/0: visible screen only; N > 0: N lines of scrollback too; -1: all of it."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < -1:
        raise InvalidInput(f"invalid history {value!r}: expected None, -1 (all) or a line count >= 0")
    return value or None


def submit(enter_count: object, submit_delay: object) -> tuple[int, float]:
    if isinstance(enter_count, bool) or not isinstance(enter_count, int) or not 0 <= enter_count <= 10:
        raise InvalidInput(f"invalid enter_count {enter_count!r}: expected an integer from 0 to 10")
    if (
        isinstance(submit_delay, bool)
        or not isinstance(submit_delay, int | float)
        or not 0 <= submit_delay <= 60
    ):
        raise InvalidInput(f"invalid submit_delay {submit_delay!r}: expected 0 to 60 seconds")
    return enter_count, float(submit_delay)


def working_directory(value: object) -> str:
    """An existing directory, as an absolute path."""
    if not isinstance(value, str) or not value or "\x00" in value or "\n" in value:
        raise InvalidInput(f"invalid working directory {value!r}")
    path = os.path.abspath(os.path.expanduser(value))
    if not os.path.exists(path):
        raise InvalidInput(f"working directory {value!r} does not exist")
    if not os.path.isdir(path):
        raise InvalidInput(f"working directory {value!r} is not a directory")
    return path


def program(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> None:
    """The program must be runnable, or the window would open only to die with a cryptic status."""
    import shutil

    if not argv:
        raise InvalidInput("empty argv: a terminal needs a program to run")
    for arg in argv:
        if not isinstance(arg, str) or "\x00" in arg:
            raise InvalidInput(f"invalid argv element {arg!r}: expected text without NUL characters")
    name = argv[0]
    if os.sep in name:
        path = name if os.path.isabs(name) else os.path.join(cwd, name)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise InvalidInput(f"agent program {name!r} does not exist or is not executable")
    elif shutil.which(name, path=env.get("PATH", os.environ.get("PATH", os.defpath))) is None:
        raise InvalidInput(f"agent program {name!r} was not found on PATH")


def environment(env: Mapping[str, str]) -> dict[str, str]:
    checked = {}
    for name, value in env.items():
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise InvalidInput(f"invalid environment variable name {name!r}")
        if not isinstance(value, str) or "\x00" in value:
            raise InvalidInput(f"invalid value for environment variable {name}: expected text without NUL")
        checked[name] = value
    return checked


def metadata(meta: Mapping[str, str]) -> str:
    """Metadata as the compact JSON stored in the window's ``@cao_meta`` option."""
    for name, value in meta.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise InvalidInput(f"invalid metadata item {name!r}: {value!r}: keys and values must be text")
    # ASCII-only JSON is one printable line: safe in tmux options and in tab-separated listings.
    return json.dumps(dict(meta), ensure_ascii=True, separators=(",", ":"), sort_keys=True)


def size(width: object, height: object) -> tuple[int, int]:
    for label, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
            raise InvalidInput(f"invalid terminal {label} {value!r}: expected 1 to {MAX_SIZE}")
    return int(width), int(height)  # type: ignore[arg-type]


def launch(spec: TerminalLaunch) -> tuple[str, dict[str, str], str]:
    """Check a whole launch before anything is created. Returns (working dir, env, metadata JSON)."""
    terminal_id(spec.terminal_id)
    session_name(spec.session_name)
    window_name(spec.window_name)
    size(spec.width, spec.height)
    cwd = working_directory(spec.working_directory)
    env = environment(spec.env)
    program(spec.argv, env, cwd)
    return cwd, env, metadata(spec.metadata)
