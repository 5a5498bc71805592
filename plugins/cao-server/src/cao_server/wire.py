"""The JSON form of cao's records on the wire, both ways: the server writes it, the client reads it back.

One cattrs converter does the work; the hooks below say only where the wire differs from the records.
Field names follow upstream where upstream has the field (a message's text is ``message`` and its
state ``status``; times are ISO 8601 strings in UTC); fields upstream lacks are added, never renamed.
cattrs is imported on first use, so importing this module stays cheap.
"""

from __future__ import annotations

import datetime as _dt
import enum
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cao_hookspecs import (
    AgentProfile,
    DelegationResult,
    Message,
    SessionInfo,
    StatusReport,
    Terminal,
)

if TYPE_CHECKING:
    import cattrs


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


def _time_or_zero(value: Any, _: Any) -> float:
    return from_iso(value) or 0.0


def _time_or_none(value: Any, _: Any) -> float | None:
    return from_iso(value)


# Leaf types JSON (or the converter) already handles; anything else goes out as its text.
_PLAIN = (str, int, float, bool, type(None), enum.Enum, Mapping, list, tuple, set, frozenset, _dt.date,
          _dt.time)


@functools.cache
def converter() -> cattrs.Converter:
    """The converter, with the wire's shape of each record registered."""
    import attrs
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
    from cattrs.preconf.json import make_converter

    conv = make_converter()
    conv.register_unstructure_hook(enum.Enum, lambda member: member.value)
    conv.register_unstructure_hook(_dt.time, lambda value: value.isoformat())
    conv.register_unstructure_hook_func(
        lambda cls: isinstance(cls, type) and cls not in (Any, object)
        and not (issubclass(cls, _PLAIN) or attrs.has(cls)), str
    )

    def both(cls: type, **fields: Any) -> None:
        conv.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, conv, **fields))
        conv.register_structure_hook(cls, make_dict_structure_fn(cls, conv, **fields))

    both(Terminal, created_at=override(unstruct_hook=_iso_if_set, struct_hook=_time_or_zero))
    both(StatusReport, since=override(unstruct_hook=iso, struct_hook=_time_or_none))
    both(
        Message,
        body=override(rename="message"),
        state=override(rename="status"),
        created_at=override(unstruct_hook=iso, struct_hook=_time_or_zero),
        updated_at=override(unstruct_hook=_iso_if_set, struct_hook=_time_or_zero),
        not_before=override(unstruct_hook=iso, struct_hook=_time_or_none),
    )
    return conv


def jsonable(value: Any) -> Any:
    """Turn a value from a record (mappings, tuples, enums, YAML dates...) into plain JSON data."""
    return converter().unstructure(value)


def _without_nones(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


# -- terminals and sessions ------------------------------------------------------------------------


def terminal_json(terminal: Terminal, report: StatusReport | None = None) -> dict[str, Any]:
    """A terminal as upstream's ``Terminal`` model, plus its session row keys and our own fields."""
    data = converter().unstructure(terminal)
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
    return converter().structure(data, Terminal)


def session_json(info: SessionInfo, terminals: list[Terminal] | None = None) -> dict[str, Any]:
    """A session as upstream lists it: ``id`` and ``name`` are both the session name; ``agent_profile``
    is its first terminal's profile (upstream's CLI treats the first terminal as the conductor)."""
    first = terminals[0] if terminals else None
    return {"id": info.name, **converter().unstructure(info),
            "agent_profile": first.agent_profile if first is not None else None}


def session_from_json(data: Mapping[str, Any]) -> SessionInfo:
    return converter().structure(_without_nones(data), SessionInfo)


# -- status ----------------------------------------------------------------------------------------


def report_json(terminal_id: str, report: StatusReport) -> dict[str, Any]:
    return {"terminal_id": terminal_id, **converter().unstructure(report)}


def report_from_json(data: Mapping[str, Any]) -> StatusReport:
    return converter().structure(_without_nones(data), StatusReport)


# -- messages --------------------------------------------------------------------------------------


def message_json(message: Message) -> dict[str, Any]:
    """Upstream's inbox row (``message`` is the text, ``status`` the state) plus delivery details."""
    return converter().unstructure(message)


def message_from_json(data: Mapping[str, Any]) -> Message:
    return converter().structure(_without_nones(data), Message)


# -- orchestration and profiles --------------------------------------------------------------------


def delegation_json(result: DelegationResult) -> dict[str, Any]:
    return converter().unstructure(result)


def delegation_from_json(data: Mapping[str, Any]) -> DelegationResult:
    return converter().structure(_without_nones(data), DelegationResult)


def profile_json(profile: AgentProfile) -> dict[str, Any]:
    """A parsed profile with unset (None) fields dropped, as upstream returns it."""
    return _without_nones(converter().unstructure(profile))


def profile_from_json(data: Mapping[str, Any]) -> AgentProfile:
    return converter().structure(data, AgentProfile)


__all__ = [
    "converter",
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
