"""Writing TOML (the standard library reads it but cannot write it): enough for the ``config.toml``
files of the agent CLIs cao starts (Codex, Kimi CLI).

Tables become ``[dotted.headers]``; arrays hold scalars or inline tables. ``None`` has no TOML
spelling, so it is an error naming the key, as is any value TOML cannot hold.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["dumps"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _string(value: str) -> str:
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else _string(name)


def _value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_key(_name(k, where))} = {_value(v, f'{where}.{k}')}" for k, v in value.items())
        return "{" + inner + "}" if inner else "{}"
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return "[" + ", ".join(_value(v, f"{where}[{i}]") for i, v in enumerate(value)) + "]"
    if value is None:
        raise ValueError(f"{where}: TOML has no null value; leave the key out instead")
    raise ValueError(f"{where}: cannot write a {type(value).__name__} as TOML")


def _name(name: Any, where: str) -> str:
    if not isinstance(name, str):
        raise ValueError(f"{where or 'top level'}: keys must be strings, got {name!r}")
    return name


def _table(data: Mapping[str, Any], path: tuple[str, ...], out: list[str]) -> None:
    where = ".".join(path)
    scalars = [(_name(k, where), v) for k, v in data.items() if not isinstance(v, Mapping)]
    tables = [(_name(k, where), v) for k, v in data.items() if isinstance(v, Mapping)]
    if path and (scalars or not tables):
        out.append("")
        out.append("[" + ".".join(_key(p) for p in path) + "]")
    for name, value in scalars:
        out.append(f"{_key(name)} = {_value(value, '.'.join((*path, name)))}")
    for name, value in tables:
        _table(value, (*path, name), out)


def dumps(data: Mapping[str, Any]) -> str:
    """``data`` as a TOML document (``tomllib.loads`` gives it back)."""
    out: list[str] = []
    _table(data, (), out)
    return "\n".join(out).lstrip("\n") + "\n"
