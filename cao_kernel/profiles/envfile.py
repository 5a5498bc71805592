"""The managed ``.env`` in the cao home: values that profiles reference as ``${VAR}``.

The file is plain ``KEY=VALUE`` lines (``#`` comments, blank lines, an optional ``export`` prefix,
values optionally single- or double-quoted). Values are substituted into profiles when they are
loaded; they are never exported to terminals.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..home import CaoHome
from .validate import ENV_KEY_RE, check_env_key, check_env_value

log = logging.getLogger(__name__)

ENV_FILE_NAME = ".env"
PLACEHOLDER_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_LINE_RE = re.compile(r"^\s*(?:export\s+)?([^=\s]+)\s*=(.*)$")
# Values made only of these characters are written bare; anything else is double-quoted.
_BARE_RE = re.compile(r"^[A-Za-z0-9_./:@%+,=-]*$")


def env_path(home: CaoHome) -> Path:
    return home.root / ENV_FILE_NAME


def _unquote(raw: str) -> str:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r'\\([\\"])', r"\1", value[1:-1])
    # An unquoted value ends where a comment starts.
    return value.split(" #", 1)[0].rstrip()


def _lines(text: str) -> list[str]:
    # Lines end at LF (CR LF too) only: str.splitlines would also end one at U+2028 or a form feed
    # inside a value, turning the rest of the value into a key of its own.
    return [line.removesuffix("\r") for line in text.split("\n")]


def parse_env(text: str) -> dict[str, str]:
    """Read ``KEY=VALUE`` lines; lines that are not assignments to a valid key are ignored."""
    values: dict[str, str] = {}
    for line in _lines(text):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE_RE.match(line)
        if match and ENV_KEY_RE.match(match.group(1)):
            values[match.group(1)] = _unquote(match.group(2))
    return values


def read_env(home: CaoHome) -> dict[str, str]:
    """The managed values (empty when the file does not exist). A file others can read is made private
    again first: it holds secrets."""
    tighten(env_path(home), 0o600)
    try:
        return parse_env(env_path(home).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {env_path(home)}: {exc}") from None


def tighten(path: Path, mode: int) -> None:
    """Take group and other permissions off ``path`` when it is ours and has any, saying so."""
    try:
        info = path.stat()
    except OSError:
        return
    if info.st_mode & 0o077 and info.st_uid == os.getuid():
        log.warning("%s was open to other users; its mode is set to %o", path, mode)
        with contextlib.suppress(OSError):
            os.chmod(path, mode)


def format_assignment(key: str, value: str) -> str:
    if _BARE_RE.match(value):
        return f"{key}={value}"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{key}="{escaped}"'


def parse_assignments(pairs: Iterable[str]) -> dict[str, str]:
    """Check ``KEY=VALUE`` strings (as given to ``--env``) and return them as a dict, in order."""
    result: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise InvalidInput(f"--env {pair!r}: expected KEY=VALUE")
        result[check_env_key(key)] = check_env_value(key, value)
    return result


def updated_env_text(current: str, updates: Mapping[str, str]) -> str:
    """``current`` with each key of ``updates`` replaced in place (comments kept) or appended."""
    pending = dict(updates)
    lines = []
    for line in _lines(current.removesuffix("\n")) if current else []:
        match = _LINE_RE.match(line) if line.strip() and not line.lstrip().startswith("#") else None
        if match and match.group(1) in pending:
            key = match.group(1)
            lines.append(format_assignment(key, pending.pop(key)))
        elif match and match.group(1) in updates:
            continue  # a later duplicate of a key already rewritten above
        else:
            lines.append(line)
    lines.extend(format_assignment(k, v) for k, v in pending.items())
    return "\n".join(lines) + "\n"


def substitute(value: Any, env: Mapping[str, str], unresolved: set[str]) -> Any:
    """Replace ``${VAR}`` in every string of ``value`` (recursively); names without a value are left
    as they are and added to ``unresolved``."""
    if isinstance(value, str):
        if "${" not in value:
            return value

        def repl(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in env:
                return env[name]
            unresolved.add(name)
            return match.group(0)

        return PLACEHOLDER_RE.sub(repl, value)
    if isinstance(value, dict):
        return {k: substitute(v, env, unresolved) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, env, unresolved) for v in value]
    return value
