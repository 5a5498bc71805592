"""The routes' JSON shapes around cao's records, both ways: the server writes them, the client reads them.

Records become JSON and back through the one converter in :mod:`cao_server.converter`; what is here is
only what a route adds around a record (upstream's extra keys, a live status) or reads differently
(upstream's clients send a terminal's tmux names).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cao_hookspecs import (
    AgentProfile,
    CreateTerminalRequest,
    DelegationResult,
    Message,
    SessionInfo,
    StatusReport,
    Terminal,
)

from .converter import from_json, iso, to_json

# -- terminals and sessions ------------------------------------------------------------------------


def terminal_json(terminal: Terminal, report: StatusReport | None = None) -> dict[str, Any]:
    """A terminal as upstream's ``Terminal`` model, plus its session row keys and our own fields."""
    data = to_json(terminal)
    if report is not None:
        data["status"] = report.status.value
    last = max(terminal.created_at, report.since or 0.0) if report is not None else terminal.created_at
    data["last_active"] = iso(last) if last else None
    data["tmux_session"] = terminal.session_name
    data["tmux_window"] = terminal.name
    return data


def terminal_from_json(data: Mapping[str, Any]) -> Terminal:
    # Upstream's clients may send only the tmux names, and nothing or null for what they do not know.
    known = {
        "name": data.get("name") or data.get("tmux_window") or "",
        "session_name": data.get("session_name") or data.get("tmux_session") or "",
        "provider": data.get("provider") or "",
        "agent_profile": data.get("agent_profile") or "",
    }
    return from_json({**data, **known}, Terminal)


def session_json(info: SessionInfo, terminals: list[Terminal] | None = None) -> dict[str, Any]:
    """A session as upstream lists it: ``id`` and ``name`` are both the session name; ``agent_profile``
    is its first terminal's profile (upstream's CLI treats the first terminal as the conductor)."""
    first = terminals[0] if terminals else None
    profile = first.agent_profile if first is not None else None
    return {"id": info.name, **to_json(info), "agent_profile": profile}


def session_from_json(data: Mapping[str, Any]) -> SessionInfo:
    return from_json(data, SessionInfo)


def creation_json(request: CreateTerminalRequest) -> dict[str, Any]:
    """The fields of a creation route's body that come from the request (the route adds its own)."""
    return to_json(request)


def creation_from_json(args: Mapping[str, Any]) -> CreateTerminalRequest:
    return from_json(args, CreateTerminalRequest)


# -- status ----------------------------------------------------------------------------------------


def report_json(terminal_id: str, report: StatusReport) -> dict[str, Any]:
    return {"terminal_id": terminal_id, **to_json(report)}


def report_from_json(data: Mapping[str, Any]) -> StatusReport:
    return from_json(data, StatusReport)


# -- messages --------------------------------------------------------------------------------------


def message_json(message: Message) -> dict[str, Any]:
    """Upstream's inbox row (``message`` is the text, ``status`` the state) plus delivery details."""
    return to_json(message)


def message_from_json(data: Mapping[str, Any]) -> Message:
    return from_json(data, Message)


# -- orchestration and profiles --------------------------------------------------------------------


def delegation_json(result: DelegationResult) -> dict[str, Any]:
    return to_json(result)


def delegation_from_json(data: Mapping[str, Any]) -> DelegationResult:
    return from_json(data, DelegationResult)


def profile_json(profile: AgentProfile) -> dict[str, Any]:
    """A parsed profile with unset (None) fields left out, as upstream returns it."""
    return to_json(profile)


def profile_from_json(data: Mapping[str, Any]) -> AgentProfile:
    return from_json(data, AgentProfile)


__all__ = [
    "creation_from_json",
    "creation_json",
    "delegation_from_json",
    "delegation_json",
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
