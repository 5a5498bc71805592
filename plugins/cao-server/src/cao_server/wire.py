"""The JSON form of cao's records on the wire, both ways: the server writes it, the client reads it back.

Field names follow upstream where upstream has the field (a message's text is ``message`` and its
state ``status``; times are ISO 8601 strings in UTC); fields upstream lacks are added, never renamed.
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
        return {f.name: jsonable(getattr(value, f.name)) for f in attrs.fields(type(value))}
    return str(value)


def _fields_of(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in attrs.fields(cls)}
    return {k: v for k, v in data.items() if k in names}


# -- terminals and sessions ------------------------------------------------------------------------


def terminal_json(terminal: Terminal, report: StatusReport | None = None) -> dict[str, Any]:
    """A terminal as upstream's ``Terminal`` model, plus its session row keys and our own fields."""
    status = report.status if report is not None else terminal.status
    last = max(terminal.created_at, report.since or 0.0) if report is not None else terminal.created_at
    return {
        "id": terminal.id,
        "name": terminal.name,
        "provider": terminal.provider,
        "session_name": terminal.session_name,
        "agent_profile": terminal.agent_profile,
        "caller_id": terminal.caller_id,
        "allowed_tools": list(terminal.allowed_tools) if terminal.allowed_tools is not None else None,
        "status": status.value,
        "last_active": iso(last) if last else None,
        "working_directory": terminal.working_directory,
        "created_at": iso(terminal.created_at) if terminal.created_at else None,
        "backend": terminal.backend,
        "tmux_session": terminal.session_name,
        "tmux_window": terminal.name,
    }


def terminal_from_json(data: Mapping[str, Any]) -> Terminal:
    return Terminal(
        id=data["id"],
        name=data.get("name") or data.get("tmux_window") or "",
        session_name=data.get("session_name") or data.get("tmux_session") or "",
        provider=data.get("provider") or "",
        agent_profile=data.get("agent_profile") or "",
        working_directory=data.get("working_directory"),
        caller_id=data.get("caller_id"),
        allowed_tools=data.get("allowed_tools"),
        created_at=from_iso(data.get("created_at")) or 0.0,
        status=data.get("status") or "unknown",
        backend=data.get("backend") or "tmux",
    )


def session_json(info: SessionInfo, terminals: list[Terminal] | None = None) -> dict[str, Any]:
    """A session as upstream lists it: ``id`` and ``name`` are both the session name; ``agent_profile``
    is its first terminal's profile (upstream's CLI treats the first terminal as the conductor)."""
    first = terminals[0] if terminals else None
    return {
        "id": info.name,
        "name": info.name,
        "status": info.status,
        "working_directory": info.working_directory,
        "agent_profile": first.agent_profile if first is not None else None,
    }


def session_from_json(data: Mapping[str, Any]) -> SessionInfo:
    return SessionInfo(
        name=data["name"],
        status=data.get("status") or "detached",
        working_directory=data.get("working_directory"),
    )


# -- status ----------------------------------------------------------------------------------------


def report_json(terminal_id: str, report: StatusReport) -> dict[str, Any]:
    return {
        "terminal_id": terminal_id,
        "status": report.status.value,
        "evidence": report.evidence,
        "since": iso(report.since),
    }


def report_from_json(data: Mapping[str, Any]) -> StatusReport:
    return StatusReport(
        status=data["status"], evidence=data.get("evidence") or "", since=from_iso(data.get("since"))
    )


# -- messages --------------------------------------------------------------------------------------


def message_json(message: Message) -> dict[str, Any]:
    """Upstream's inbox row (``message`` is the text, ``status`` the state) plus delivery details."""
    return {
        "id": message.id,
        "sender_id": message.sender_id,
        "receiver_id": message.receiver_id,
        "message": message.body,
        "status": message.state.value,
        "created_at": iso(message.created_at),
        "updated_at": iso(message.updated_at) if message.updated_at else None,
        "orchestration_type": message.orchestration_type.value,
        "attempts": message.attempts,
        "last_error": message.last_error,
        "idempotency_key": message.idempotency_key,
        "not_before": iso(message.not_before),
    }


def message_from_json(data: Mapping[str, Any]) -> Message:
    return Message(
        id=int(data["id"]),
        sender_id=data["sender_id"],
        receiver_id=data["receiver_id"],
        body=data["message"],
        state=data["status"],
        created_at=from_iso(data.get("created_at")) or 0.0,
        updated_at=from_iso(data.get("updated_at")) or 0.0,
        orchestration_type=data.get("orchestration_type") or "send_message",
        attempts=int(data.get("attempts") or 0),
        last_error=data.get("last_error"),
        idempotency_key=data.get("idempotency_key"),
        not_before=from_iso(data.get("not_before")),
    )


# -- orchestration and profiles --------------------------------------------------------------------


def delegation_json(result: DelegationResult) -> dict[str, Any]:
    return {
        "kind": result.kind.value,
        "success": result.success,
        "message": result.message,
        "agent_profile": result.agent_profile,
        "caller_id": result.caller_id,
        "terminal_id": result.terminal_id,
        "output": result.output,
        "duration": result.duration,
    }


def delegation_from_json(data: Mapping[str, Any]) -> DelegationResult:
    return DelegationResult(**_fields_of(DelegationResult, data))


def profile_json(profile: AgentProfile) -> dict[str, Any]:
    """A parsed profile with unset (None) fields dropped, as upstream returns it."""
    out = {f.name: jsonable(getattr(profile, f.name)) for f in attrs.fields(AgentProfile)}
    return {k: v for k, v in out.items() if v is not None}


def profile_from_json(data: Mapping[str, Any]) -> AgentProfile:
    return AgentProfile(**_fields_of(AgentProfile, data))


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
