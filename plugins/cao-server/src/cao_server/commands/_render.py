"""What the commands print: fixed-width tables, and JSON (fields of records as the API writes them)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from ..converter import to_json_fields
from ..printable import printable

if TYPE_CHECKING:
    from cao_hookspecs import Message, Terminal, TimelineEvent


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
    # Sender ids, bodies and names come from other agents and clients: never raw escape sequences.
    return "N/A" if value is None else printable(str(value))


def status_of(terminal: Terminal) -> str:
    return str(getattr(terminal.status, "value", terminal.status))


def terminal_summary(terminal: Terminal) -> dict[str, Any]:
    """The four fields upstream's ``session`` commands print for a terminal, as the API writes them."""
    return to_json_fields(terminal, ("id", "agent_profile", "provider", "status"))


def terminal_json(terminal: Terminal) -> dict[str, Any]:
    """What ``cao terminal`` prints of a terminal: its identity, where it runs and its status."""
    return to_json_fields(terminal, (
        "id", "name", "session_name", "provider", "agent_profile", "status", "working_directory", "caller_id",
        "allowed_tools", "created_at",
    ))


def message_json(message: Message) -> dict[str, Any]:
    """An inbox message as upstream's inbox listing shows it, plus cao's delivery details."""
    return to_json_fields(message, (
        "id", "sender_id", "receiver_id", "message", "status", "created_at", "orchestration_type", "attempts",
        "last_error",
    ))


def clock(timestamp: float) -> str:
    """Local time of day, for tables."""
    return datetime.datetime.fromtimestamp(timestamp).strftime("%H:%M:%S")


def timeline_lines(events: Sequence[TimelineEvent]) -> list[str]:
    """One line per step: seconds since the first step, the gap from the one before, its name and
    detail; the first line says when the first step happened."""
    if not events:
        return ["No steps recorded"]
    first = events[0].at
    lines = [f"{'at':>8} {'gap':>8}  step (from {clock(first)})"]
    previous = first
    for event in events:
        detail = ", ".join(_timeline_detail(event, key, value) for key, value in event.detail.items())
        lines.append(printable(f"{event.at - first:8.3f} {event.at - previous:+8.3f}  {event.name}"
                               + (f"  ({detail})" if detail else "")))
        previous = event.at
    return lines


def _timeline_detail(event: TimelineEvent, key: str, value: str) -> str:
    if key == "received":  # a step another process reported: how late the kernel heard of it
        try:
            return f"heard {float(value) - event.at:+.3f}"
        except ValueError:
            pass
    return f"{key}={one_line(value, 60)}"


def one_line(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"
