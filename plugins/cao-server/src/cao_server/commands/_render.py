"""Turning cao records into what the commands print: fixed-width tables and upstream-shaped JSON."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from cao_hookspecs import Message, Terminal


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def table(headers: Sequence[tuple[str, int]], rows: Sequence[Sequence[object]]) -> None:
    """Print a header line, a rule and one line per row; each column is padded to its width (a longer
    value widens its own cell only, so nothing is cut)."""
    click.echo(" ".join(f"{name:<{width}}" for name, width in headers).rstrip())
    click.echo("-" * (sum(width for _, width in headers) + len(headers) - 1))
    for row in rows:
        click.echo(" ".join(f"{_cell(value):<{width}}" for value, (_, width) in zip(row, headers)).rstrip())


def _cell(value: object) -> str:
    return "N/A" if value is None else str(value)


def status_of(terminal: Terminal) -> str:
    return str(getattr(terminal.status, "value", terminal.status))


def terminal_summary(terminal: Terminal) -> dict[str, Any]:
    """The four fields upstream's ``session`` commands print for a terminal."""
    return {
        "id": terminal.id,
        "agent_profile": terminal.agent_profile,
        "provider": terminal.provider,
        "status": status_of(terminal),
    }


def terminal_json(terminal: Terminal) -> dict[str, Any]:
    """Every field of a terminal record, upstream's names where upstream has them."""
    return {
        "id": terminal.id,
        "name": terminal.name,
        "session_name": terminal.session_name,
        "provider": terminal.provider,
        "agent_profile": terminal.agent_profile,
        "status": status_of(terminal),
        "working_directory": terminal.working_directory,
        "caller_id": terminal.caller_id,
        "allowed_tools": list(terminal.allowed_tools) if terminal.allowed_tools is not None else None,
        "created_at": iso_time(terminal.created_at) if terminal.created_at else None,
    }


def message_json(message: Message) -> dict[str, Any]:
    """An inbox message as upstream's inbox listing shows it, plus cao's delivery details."""
    return {
        "id": message.id,
        "sender_id": message.sender_id,
        "receiver_id": message.receiver_id,
        "message": message.body,
        "status": str(getattr(message.state, "value", message.state)),
        "created_at": iso_time(message.created_at),
        "orchestration_type": str(getattr(message.orchestration_type, "value", message.orchestration_type)),
        "attempts": message.attempts,
        "last_error": message.last_error,
    }


def iso_time(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, tz=datetime.timezone.utc).isoformat()


def clock(timestamp: float) -> str:
    """Local time of day, for tables."""
    return datetime.datetime.fromtimestamp(timestamp).strftime("%H:%M:%S")


def one_line(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"
