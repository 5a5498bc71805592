"""The JSON form of cao's records on the wire, both ways: the server writes it, the client reads it back.

A record goes out field by field, as attrs lists its fields, and comes back through its own constructor
(whose converters rebuild enums, tuples and frozen mappings); the tables below say only where the wire
differs from the records. Field names follow upstream where upstream has the field (a message's text
is ``message`` and its state ``status``; times are ISO 8601 strings in UTC); fields upstream lacks are
added, never renamed. Plain Python: a CLI command that converts a few rows pays no library import.
"""

from __future__ import annotations

import datetime as _dt
import enum
from collections.abc import Mapping
from typing import Any

import attrs

from cao_hookspecs import (
    AgentProfile,
    DelegationResult,
    Message,
    SessionInfo,
    StatusReport,
    Terminal,
)


def iso(ts: float | None) -> str | None:
    """A Unix time as an ISO 8601 string in UTC with microseconds (None stays None)."""
    if ts is None:
        return None
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).isoformat(timespec="microseconds")


def from_iso(value: Any) -> float | None:
    """Read back a time written by :func:`iso` (a plain number is taken as a Unix time)."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    parsed = _dt.datetime.fromisoformat(str(value))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.UTC)
    return parsed.timestamp()


def _iso_if_set(ts: float) -> str | None:
    # Records use 0.0 for "never"; the wire says null.
    return iso(ts) if ts else None


def _time_or_zero(value: Any) -> float:
    return from_iso(value) or 0.0


# Where the wire differs from a record: a field's wire name, and how a time field is written and read.
_WIRE_NAMES: dict[type, dict[str, str]] = {Message: {"body": "message", "state": "status"}}
_TIMES: dict[type, dict[str, tuple[Any, Any]]] = {
    Terminal: {"created_at": (_iso_if_set, _time_or_zero)},
    StatusReport: {"since": (iso, from_iso)},
    Message: {"created_at": (iso, _time_or_zero), "updated_at": (_iso_if_set, _time_or_zero),
              "not_before": (iso, from_iso)},
}
# Fields JSON may carry as text or as a float, which the record wants as a whole number.
_WHOLE_NUMBERS: dict[type, frozenset[str]] = {Message: frozenset({"id", "attempts"})}
# Annotations of fields whose values JSON takes as they are.
_PLAIN = frozenset({"str", "int", "float", "bool", "str | None", "int | None", "float | None", "bool | None"})
_writers: dict[type, Any] = {}


def _writer(cls: type) -> Any:
    """A function that turns a ``cls`` record into its wire dict, compiled once per class from the
    class's fields and the tables above (one dict display, as fast as writing it out by hand)."""
    writer = _writers.get(cls)
    if writer is None:
        names, times = _WIRE_NAMES.get(cls, {}), _TIMES.get(cls, {})
        scope: dict[str, Any] = {}
        items = []
        for index, field in enumerate(attrs.fields(cls)):
            plain = field.type in _PLAIN
            convert = times[field.name][0] if field.name in times else None if plain else jsonable
            value = f"record.{field.name}"
            if convert is not None:
                scope[f"convert{index}"] = convert
                value = f"convert{index}({value})"
            items.append(f"{names.get(field.name, field.name)!r}: {value}")
        source = f"def write(record):\n    return {{{', '.join(items)}}}\n"
        exec(compile(source, f"<wire writer for {cls.__name__}>", "exec"), scope)
        writer = _writers[cls] = scope["write"]
    return writer


def _record_json(record: Any) -> dict[str, Any]:
    return _writer(type(record))(record)


def _fields_in(cls: type) -> list[tuple[str, str]]:
    names = _WIRE_NAMES.get(cls, {})
    return [(field.name, names.get(field.name, field.name)) for field in attrs.fields(cls)]


def _record_from_json(cls: type, data: Mapping[str, Any]) -> Any:
    """``cls`` built from the wire's fields in ``data`` (other keys are ignored, absent and null fields
    take the record's defaults)."""
    times, whole = _TIMES.get(cls, {}), _WHOLE_NUMBERS.get(cls, frozenset())
    values = {}
    for name, wire_name in _fields_in(cls):
        value = data.get(wire_name)
        if value is None:
            continue
        if name in times:
            value = times[name][1](value)
        elif name in whole:
            value = int(value)
        values[name] = value
    return cls(**values)


def jsonable(value: Any) -> Any:
    """Turn a value from a record (mappings, tuples, enums, YAML dates...) into plain JSON data."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if attrs.has(type(value)):
        return _record_json(value)
    return str(value)


def _without_nones(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


# -- terminals and sessions ------------------------------------------------------------------------


def terminal_json(terminal: Terminal, report: StatusReport | None = None) -> dict[str, Any]:
    """A terminal as upstream's ``Terminal`` model, plus its session row keys and our own fields."""
    data = _record_json(terminal)
    if report is not None:
        data["status"] = report.status.value
    last = max(terminal.created_at, report.since or 0.0) if report is not None else terminal.created_at
    data["last_active"] = iso(last) if last else None
    data["tmux_session"] = terminal.session_name
    data["tmux_window"] = terminal.name
    return data


def terminal_from_json(data: Mapping[str, Any]) -> Terminal:
    # Upstream's clients may send only the tmux names.
    data = {"provider": "", "agent_profile": "", **_without_nones(data),
            "name": data.get("name") or data.get("tmux_window") or "",
            "session_name": data.get("session_name") or data.get("tmux_session") or ""}
    return _record_from_json(Terminal, data)


def session_json(info: SessionInfo, terminals: list[Terminal] | None = None) -> dict[str, Any]:
    """A session as upstream lists it: ``id`` and ``name`` are both the session name; ``agent_profile``
    is its first terminal's profile (upstream's CLI treats the first terminal as the conductor)."""
    first = terminals[0] if terminals else None
    return {"id": info.name, **_record_json(info),
            "agent_profile": first.agent_profile if first is not None else None}


def session_from_json(data: Mapping[str, Any]) -> SessionInfo:
    return _record_from_json(SessionInfo, data)


# -- status ----------------------------------------------------------------------------------------


def report_json(terminal_id: str, report: StatusReport) -> dict[str, Any]:
    return {"terminal_id": terminal_id, **_record_json(report)}


def report_from_json(data: Mapping[str, Any]) -> StatusReport:
    return _record_from_json(StatusReport, data)


# -- messages --------------------------------------------------------------------------------------


def message_json(message: Message) -> dict[str, Any]:
    """Upstream's inbox row (``message`` is the text, ``status`` the state) plus delivery details."""
    return _record_json(message)


def message_from_json(data: Mapping[str, Any]) -> Message:
    return _record_from_json(Message, data)


# -- orchestration and profiles --------------------------------------------------------------------


def delegation_json(result: DelegationResult) -> dict[str, Any]:
    return _record_json(result)


def delegation_from_json(data: Mapping[str, Any]) -> DelegationResult:
    return _record_from_json(DelegationResult, data)


def profile_json(profile: AgentProfile) -> dict[str, Any]:
    """A parsed profile with unset (None) fields dropped, as upstream returns it."""
    return _without_nones(_record_json(profile))


def profile_from_json(data: Mapping[str, Any]) -> AgentProfile:
    return _record_from_json(AgentProfile, data)


__all__ = [
    "delegation_from_json",
    "delegation_json",
    "from_iso",
    "iso",
    "jsonable",
    "message_from_json",
    "message_json",
    "profile_from_json",
    "profile_json",
    "report_from_json",
    "report_json",
    "session_from_json",
    "session_json",
    "terminal_from_json",
    "terminal_json",
]
