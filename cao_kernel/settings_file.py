"""``settings.json`` in the cao home: the settings a person sets once, by dotted key (``cao config``).

Each key stands for one ``CAO_*`` setting the kernel and its plugins already read; the file is a source
below the environment, so the order is: settings handed to ``Kernel(settings=...)`` (embedding apps,
tests), then ``CAO_*`` environment variables, then this file, then each setting's built-in default.

The file is JSON with one object per section (``{"terminal": {"default_provider": "claude_code"}}``),
as upstream's, so a file written by upstream keeps working: keys cao does not know are left as they are
and ignored. A key cao knows must hold a value of its type and range, or the kernel refuses to start and
names the key and the problem (``cao config set`` or ``cao config unset`` repairs it).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from pathlib import Path

    from .home import CaoHome

SETTINGS_FILE = "settings.json"
LOCK_FILE = ".settings.json.lock"
MAX_FILE_BYTES = 256 * 1024
MAX_LIST_ITEMS = 64

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}\Z")
# A host name or address, optionally with a port; ``*`` (any host) where the key allows it.
_HOST_RE = re.compile(r"^(\*|[A-Za-z0-9._-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(:\d{1,5})?\Z")
_ORIGIN_RE = re.compile(r"^https?://[A-Za-z0-9._\[\]:-]{1,260}\Z")


class Key(NamedTuple):
    """One setting: the ``CAO_*`` name it stands for, its type and range, and what it does."""

    env: str
    kind: str  # name | int | number | hosts | origins
    help: str
    default: str
    minimum: float = 0
    maximum: float = math.inf


KEYS: dict[str, Key] = {
    "terminal.default_provider": Key(
        "CAO_DEFAULT_PROVIDER", "name", "provider for a profile that names none", "kiro_cli"),
    "terminal.backend": Key("CAO_TERMINAL_BACKEND", "name", "where terminals run", "tmux"),
    "terminal.max_terminals": Key(
        "CAO_MAX_TERMINALS", "int", "live terminals at most (0: no limit)", "0", 0, 100_000),
    "terminal.history_days": Key(
        "CAO_TERMINAL_HISTORY_DAYS", "number",
        "days a removed terminal's screen log is kept for `cao terminal restore` (0: none kept)", "7",
        0, 3650),
    "server.provider_init_timeout": Key(
        "CAO_PROVIDER_INIT_TIMEOUT", "number", "seconds an agent CLI has to become ready", "60", 1, 3600),
    "server.mcp_connect_timeout": Key(
        "CAO_MCP_CONNECT_TIMEOUT", "number",
        "seconds a new agent's MCP client has to connect (0: no wait)", "30", 0, 3600),
    "network.allowed_hosts": Key(
        "CAO_ALLOWED_HOSTS", "hosts", "extra Host header values cao-server accepts (* for any)", ""),
    "network.cors_origins": Key(
        "CAO_CORS_ORIGINS", "origins", "browser origins allowed to call cao-server", ""),
    "profiles.allowed_hosts": Key(
        "CAO_PROFILE_ALLOWED_HOSTS", "hosts", "extra hosts `cao install` may download profiles from", ""),
    "profiles.download_timeout": Key(
        "CAO_PROFILE_DOWNLOAD_TIMEOUT", "number", "seconds one profile download may take", "20", 0.001, 3600),
    "inbox.keep_days": Key(
        "CAO_INBOX_KEEP_DAYS", "number", "days a finished message keeps its body", "7", 0, 3650),
    "inbox.max_pending": Key(
        "CAO_INBOX_MAX_PENDING", "int", "messages waiting for one terminal at most (0: no limit)", "100",
        0, 1_000_000),
}


def settings_path(home: CaoHome) -> Path:
    return home.root / SETTINGS_FILE


def key_of(name: str) -> Key:
    """The key ``name``, or ``NotFound`` listing the known ones."""
    key = KEYS.get(name)
    if key is None:
        raise NotFound(f"unknown setting {name!r}; known settings: {', '.join(sorted(KEYS))}")
    return key


def check_value(name: str, value: Any) -> Any:
    """``value`` if it is valid for setting ``name`` (lists returned as lists), else ``InvalidInput``
    naming the setting and what it takes."""
    key = key_of(name)
    if key.kind in ("int", "number"):
        whole = key.kind == "int"
        what = f"a {'whole ' if whole else ''}number from {_number(key.minimum)} to {_number(key.maximum)}"
        number = isinstance(value, int) or (not whole and isinstance(value, float))
        ok = number and not isinstance(value, bool)
        if not ok or not (key.minimum <= value <= key.maximum):
            raise InvalidInput(f"setting {name} must be {what}, not {value!r}")
        return value
    if key.kind == "name":
        if not isinstance(value, str) or not _NAME_RE.match(value):
            raise InvalidInput(f"setting {name} must be a name of lowercase letters, digits, '_', '.' or '-' "
                               f"(at most 64), not {value!r}")
        return value
    pattern, what = (_HOST_RE, "host names (host or host:port, * for any)") if key.kind == "hosts" else (
        _ORIGIN_RE, "origins (http://host[:port] or https://host[:port])")
    if not isinstance(value, list) or len(value) > MAX_LIST_ITEMS:
        raise InvalidInput(f"setting {name} must be a list of at most {MAX_LIST_ITEMS} {what}, not {value!r}")
    for item in value:
        if not isinstance(item, str) or not pattern.match(item):
            raise InvalidInput(f"setting {name}: {item!r} is not one of {what}")
    return list(value)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def parse_value(name: str, raw: str) -> Any:
    """A value typed on a command line for setting ``name``: a number, a name, or a list given as JSON
    (``["a", "b"]``) or comma-separated (``a,b``; empty for none). Checked as ``check_value`` does."""
    key = key_of(name)
    text = raw.strip()
    value: Any = text
    if key.kind in ("int", "number"):
        try:
            value = float(text)
        except ValueError:
            value = text
        # Whole numbers are stored as such ("3.0" is 3); an int() first keeps big ones exact.
        with contextlib.suppress(ValueError):
            value = int(text)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
    elif key.kind in ("hosts", "origins"):
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                raise InvalidInput(f"setting {name}: {raw!r} is not a JSON list") from None
        else:
            value = [item.strip() for item in text.split(",") if item.strip()]
    return check_value(name, value)


def _load(path: Path, text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    if len(text.encode()) > MAX_FILE_BYTES:
        raise InvalidInput(f"{path} is larger than {MAX_FILE_BYTES} bytes")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} must hold a JSON object, not {type(data).__name__}")
    return data


def _values(path: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """The known settings ``data`` holds, checked (a bad one is named, with the file)."""
    found: dict[str, Any] = {}
    for name in KEYS:
        section, _, field = name.partition(".")
        part = data.get(section)
        if isinstance(part, dict) and field in part and part[field] is not None:
            try:
                found[name] = check_value(name, part[field])
            except InvalidInput as exc:
                raise InvalidInput(f"{path}: {exc}") from None
    return found


def read_settings(home: CaoHome) -> dict[str, Any]:
    """Dotted key -> value of every known setting in the file ({} when there is no file)."""
    from .home_files import read_text

    path = settings_path(home)
    return _values(path, _load(path, read_text(path)))


def as_environment(values: Mapping[str, Any]) -> dict[str, str]:
    """The file's settings as the ``CAO_*`` strings the kernel's settings mapping holds."""
    out = {}
    for name, value in values.items():
        if isinstance(value, list):
            out[KEYS[name].env] = ",".join(value)
        else:
            out[KEYS[name].env] = str(value)
    return out


def update(home: CaoHome, name: str, value: Any) -> None:
    """Set (or, with ``value`` None, remove) setting ``name`` in the file, under its lock. Other keys,
    known or not, are kept as they are; a file that does not parse is refused, not overwritten."""
    from .home_files import locked, read_text, write_private

    key_of(name)
    if value is not None:
        value = check_value(name, value)
    path = settings_path(home)
    with locked(home.root / LOCK_FILE):
        data = _load(path, read_text(path))
        section, _, field = name.partition(".")
        part = data.get(section)
        if not isinstance(part, dict):
            part = {}
        if value is None:
            part.pop(field, None)
        else:
            part[field] = value
        if part:
            data[section] = part
        else:
            data.pop(section, None)
        write_private(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def resolved(home: CaoHome, environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Dotted key -> (effective value as the kernel reads it, where it comes from: ``env``, ``file``
    or ``default``) for every known setting."""
    from_file = as_environment(read_settings(home))
    rows = {}
    for name, key in KEYS.items():
        if environ.get(key.env):
            rows[name] = (environ[key.env], "env")
        elif key.env in from_file:
            rows[name] = (from_file[key.env], "file")
        else:
            rows[name] = (key.default, "default")
    return rows
