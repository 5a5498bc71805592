"""What each forwarded event says: a service-neutral ``Notice`` built from a hook's arguments.

Notices are built on the sender thread, never on the kernel's event loop: the observers only queue the
hook's (frozen) records. Each service renders a notice its own way (``Service.render``).
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: Every event kind a notifier can forward, in the order the notifiers' READMEs list them.
EVENT_KINDS = (
    "session_created",
    "session_killed",
    "terminal_created",
    "terminal_killed",
    "message_delivered",
    "message_dead",
    "handoff_finished",
    "assign_finished",
    "waiting_user_answer",
)

#: How an event went, from a notice's ``level``; each service shows every one (a colour, an emoji).
LEVELS = ("good", "bad", "warn", "info", "muted")

# Terminal output can carry colour codes and other control sequences; chat clients show them raw.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Notice:
    """One event, ready to be rendered for a chat service.

    ``level`` is one of ``LEVELS``: ``good``, ``bad``, ``warn``, ``info`` or ``muted`` (the service
    picks a colour or an emoji); ``body`` is optional long text (a message or an answer) shown below
    the summary.
    """

    kind: str
    title: str
    summary: str
    fields: tuple[tuple[str, str], ...]
    level: str
    at: float
    body: str = ""


def clean(text: object) -> str:
    """Text fit for a chat message: escape sequences and control characters removed."""
    return _CONTROL.sub("", _ANSI.sub("", str(text if text is not None else "")))


def describe(kind: str, args: Mapping[str, Any], at: float, *, console_url: str = "") -> Notice:
    """The notice for one event; ``args`` are the hook's arguments as the observer received them.
    ``console_url`` (the web console's address, when the notifier knows it) adds a link to a prompt."""
    try:
        build = _BUILDERS[kind]
    except KeyError:
        raise ValueError(f"unknown event kind {kind!r}") from None
    if kind == "waiting_user_answer" and "event" in args:
        build = functools.partial(_prompt, console_url=console_url)
    title, summary, fields, level, body = build(**args)
    return Notice(
        kind=kind, title=clean(title), summary=clean(summary),
        fields=tuple((name, clean(value)) for name, value in fields if value not in (None, "")),
        level=level, at=at, body=clean(body),
    )


def _terminal_fields(terminal: Any) -> list[tuple[str, Any]]:
    return [
        ("Terminal", terminal.id),
        ("Session", terminal.session_name),
        ("Profile", terminal.agent_profile),
        ("Provider", terminal.provider),
    ]


def _session_created(session: Any, terminal: Any) -> tuple[Any, ...]:
    fields = [("Terminal", terminal.id), ("Profile", terminal.agent_profile), ("Provider", terminal.provider),
              ("Directory", terminal.working_directory)]
    summary = f"{terminal.agent_profile} ({terminal.provider}) runs in terminal {terminal.id}."
    return f"Session started: {session.name}", summary, fields, "good", ""


def _session_killed(session_name: str, terminal_ids: list[str]) -> tuple[Any, ...]:
    count = len(terminal_ids)
    return (f"Session ended: {session_name}",
            f"The session and its {count} terminal{'s' if count != 1 else ''} were deleted.",
            [("Terminals", ", ".join(terminal_ids) or "none")], "muted", "")


def _terminal_created(terminal: Any) -> tuple[Any, ...]:
    summary = f"{terminal.agent_profile} ({terminal.provider}) started in session {terminal.session_name}."
    return (f"Terminal started: {terminal.name}", summary,
            _terminal_fields(terminal) + [("Caller", terminal.caller_id)], "info", "")


def _terminal_killed(terminal: Any) -> tuple[Any, ...]:
    summary = f"{terminal.agent_profile} in terminal {terminal.id} was deleted."
    return f"Terminal closed: {terminal.name}", summary, _terminal_fields(terminal), "muted", ""


def _message_fields(message: Any) -> list[tuple[str, Any]]:
    return [
        ("From", message.sender_id),
        ("To", message.receiver_id),
        ("Message", f"#{message.id}"),
        ("Type", getattr(message.orchestration_type, "value", message.orchestration_type)),
        ("Attempts", str(message.attempts)),
    ]


def _message_delivered(message: Any, receipt: Any) -> tuple[Any, ...]:
    return (f"Message delivered to {message.receiver_id}",
            f"Message #{message.id} from {message.sender_id} was typed into terminal {receipt.terminal_id}.",
            _message_fields(message), "info", message.body)


def _message_dead(message: Any, reason: str) -> tuple[Any, ...]:
    return (f"Message to {message.receiver_id} could not be delivered",
            f"Message #{message.id} from {message.sender_id} was given up: {reason}",
            _message_fields(message), "bad", message.body)


def _delegation_fields(result: Any) -> list[tuple[str, Any]]:
    return [
        ("Profile", result.agent_profile),
        ("Worker", result.terminal_id),
        ("Caller", result.caller_id),
    ]


def _handoff_finished(result: Any) -> tuple[Any, ...]:
    verb = "finished" if result.success else "failed"
    fields = _delegation_fields(result) + [("Duration", f"{result.duration:.1f} s")]
    return (f"Handoff {verb}: {result.agent_profile}", result.message, fields,
            "good" if result.success else "bad", result.output or "")


def _assign_finished(result: Any) -> tuple[Any, ...]:
    verb = "delivered" if result.success else "failed"
    return (f"Assign {verb}: {result.agent_profile}", result.message, _delegation_fields(result),
            "good" if result.success else "bad", "")


def _waiting_user_answer(terminal: Any, report: Any) -> tuple[Any, ...]:
    summary = f"{terminal.agent_profile} in terminal {terminal.id} is waiting for your answer."
    if report.evidence:
        summary += f" ({report.evidence})"
    return (f"{terminal.name} needs your answer", summary, _terminal_fields(terminal), "warn", "")


def _prompt(event: Any, console_url: str = "") -> tuple[Any, ...]:
    """A prompt opened or escalated (``cao_after_prompt``): what is asked, the options by number, and
    how to answer it from anywhere cao runs."""
    opened = event.prompt
    prompt, terminal = opened.prompt, opened.terminal_id
    kind = getattr(event.kind, "value", event.kind)
    lines = []
    if prompt.tool:
        shown = " ".join(prompt.arguments.values())
        lines.append(f"{prompt.tool}" + (f": {shown}" if shown else "")
                     + ("" if prompt.arguments_complete else " (cut on screen)"))
    for number, option in enumerate(prompt.options, 1):
        marks = [mark for mark, on in (("default", number == prompt.default),
                                       ("takes text", option.takes_text)) if on]
        lines.append(f"{number}. {option.label}" + (f"  ({', '.join(marks)})" if marks else ""))
    lines.append("")
    # The id pins the answer to this prompt: an answer given after it went is refused, never typed.
    # Placeholders in capitals, as the command's own help names them: chat services eat '<...>'.
    where = f"{shlex.quote(terminal)} OPTION --prompt {shlex.quote(opened.id)}"
    if prompt.options:
        lines.append(f"Answer: cao terminal answer {where}")
    if prompt.free_text or any(option.takes_text for option in prompt.options):
        with_text = "OPTION --text 'TEXT'" if prompt.options else "--text 'TEXT'"
        text_where = where.replace("OPTION", with_text)
        lines.append(f"With text: cao terminal answer {text_where}")
    if console_url:
        lines.append(f"Console: {console_url.rstrip('/')}/#/terminal/{terminal}")
    fields = [("Terminal", terminal), ("Prompt", opened.id),
              ("Kind", getattr(prompt.kind, "value", prompt.kind)), ("Tool", prompt.tool)]
    question = f"{prompt.title}: {prompt.question}" if prompt.title else prompt.question
    if kind == "escalated":
        summary = f"Nobody answered terminal {terminal}'s prompt in time: {question}"
        if event.detail:
            summary += f" ({event.detail})"
        return f"Prompt escalated: terminal {terminal}", summary, fields, "bad", "\n".join(lines)
    return (f"Terminal {terminal} waits for your answer", question, fields, "warn", "\n".join(lines))


_BUILDERS: dict[str, Callable[..., tuple[Any, ...]]] = {
    "session_created": _session_created,
    "session_killed": _session_killed,
    "terminal_created": _terminal_created,
    "terminal_killed": _terminal_killed,
    "message_delivered": _message_delivered,
    "message_dead": _message_dead,
    "handoff_finished": _handoff_finished,
    "assign_finished": _assign_finished,
    "waiting_user_answer": _waiting_user_answer,
}
