"""Changing the managed ``.env`` (``cao env``): one key at a time, each change under the file's lock.

The format and the reading are :mod:`.envfile`'s; this module adds the writers. Every change reads the
file and writes it back whole under the lock ``cao install --env`` takes too, so two writers at once
keep both changes; the file is replaced atomically and is private (0600) from its first byte. Keys are
POSIX names; values are one line, without NUL, at most ``MAX_VALUE_BYTES``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InvalidInput
from .envfile import _LINE_RE, _lines, env_path, parse_env, tighten, updated_env_text
from .validate import check_env_key, check_env_value

if TYPE_CHECKING:
    from collections.abc import Iterator
    from contextlib import AbstractContextManager

    from ..home import CaoHome

LOCK_FILE = ".env.lock"
MAX_VALUE_BYTES = 16 * 1024
MAX_FILE_BYTES = 1024 * 1024


def env_lock(home: CaoHome) -> AbstractContextManager[None]:
    """The exclusive lock every writer of the managed ``.env`` holds from its read to its write."""
    from ..home_files import locked

    return locked(home.root / LOCK_FILE)


def check_value(key: str, value: str) -> str:
    check_env_value(key, value)
    if len(value.encode("utf-8", "surrogatepass")) > MAX_VALUE_BYTES:
        raise InvalidInput(f"env var {key}: the value is longer than {MAX_VALUE_BYTES} bytes")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"env var {key}: the value is not valid text") from None
    return value


def _current(home: CaoHome) -> str:
    from ..home_files import read_text

    tighten(env_path(home), 0o600)
    return read_text(env_path(home))


def _write(home: CaoHome, text: str) -> None:
    from ..home_files import write_private

    if len(text.encode()) > MAX_FILE_BYTES:
        raise InvalidInput(f"{env_path(home)} would grow past {MAX_FILE_BYTES} bytes; "
                           f"remove some values first")
    write_private(env_path(home), text, 0o600)


def set_value(home: CaoHome, key: str, value: str) -> None:
    """Set ``key`` to ``value`` (replaced where it stands, comments kept; else appended)."""
    check_env_key(key)
    check_value(key, value)
    with env_lock(home):
        _write(home, updated_env_text(_current(home), {key: value}))


def _without(text: str, key: str) -> Iterator[str]:
    for line in _lines(text.removesuffix("\n")):
        is_comment = not line.strip() or line.lstrip().startswith("#")
        match = None if is_comment else _LINE_RE.match(line)
        if match is None or match.group(1) != key:
            yield line


def unset_value(home: CaoHome, key: str) -> bool:
    """Remove every assignment of ``key``; False when the file had none (nothing is written then)."""
    check_env_key(key)
    with env_lock(home):
        current = _current(home)
        if key not in parse_env(current):
            return False
        lines = list(_without(current, key))
        _write(home, "\n".join(lines) + "\n" if any(line.strip() for line in lines) else "")
    return True


def read_values(home: CaoHome) -> dict[str, str]:
    """Every managed value, in file order."""
    return parse_env(_current(home))
