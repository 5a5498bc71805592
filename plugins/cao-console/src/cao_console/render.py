"""What the console draws, as rich ``Text``: never markup strings.

Names, evidence, message bodies and screens come from agents and other clients. Built as ``Text``
they are shown exactly as sent: ``[bold]`` stays those seven characters. Bodies and evidence also go
through ``printable``, so an escape sequence in them shows as ``\\x1b[...`` instead of driving the
terminal; a screen goes through ``Text.from_ansi``, which keeps its colours and drops other controls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from cao_server.commands._render import clock, one_line
from cao_server.printable import printable
from rich.text import Text

if TYPE_CHECKING:
    from cao_hookspecs import Message

    from .team import Member, PromptChanged, PromptView, Session, Waiting

STATUS_STYLES = {
    "idle": "green",
    "completed": "bold green",
    "processing": "yellow",
    "waiting_user_answer": "bold magenta",
    "error": "bold red",
    "unknown": "dim",
}
BODY_WIDTH = 72
SHOWN_MESSAGES = 5  # pending messages listed in the details; the rest are counted


def status_text(status: str) -> Text:
    return Text(printable(status), style=STATUS_STYLES.get(status, ""))


def since_text(since: float | None) -> str:
    return f"since {clock(since)}" if since is not None else ""


def waiting_text(waits: Sequence[Waiting], names: Mapping[str, str] | None = None) -> Text:
    """``waits`` in a few words: ``handoff developer-3c4d`` (the worker's id when its name is not in
    ``names``), ``2 messages``, ``an answer``."""
    names = names or {}
    out = Text()
    for wait in waits:
        if out:
            out.append(", ")
        if wait.kind == "handoff":
            worker = wait.worker_id or "?"
            out.append(f"handoff {printable(names.get(worker, worker))}", style="cyan")
        elif wait.kind == "messages":
            out.append(f"{wait.count} message{'s' if wait.count != 1 else ''}", style="cyan")
        elif wait.kind == "prompt":
            out.append("an answer", style="bold magenta")
        else:
            out.append(printable(wait.kind), style="cyan")
    return out


def session_label(session: Session) -> Text:
    from cao_hookspecs.names import POOL_SESSION_PREFIX

    count = len(session.members)
    label = Text.assemble((printable(session.name), "bold"),
                          (f"  {count} terminal{'s' if count != 1 else ''}", "dim"))
    if session.name.startswith(POOL_SESSION_PREFIX):
        label.append("  warm pool", "cyan")
    return label


def member_label(member: Member, names: Mapping[str, str] | None = None) -> Text:
    """One row of the tree: name (its profile leads it), provider, status and since when, and what it
    waits for besides an answer (the status says that), with workers by name from ``names``. The
    evidence and the rest are in the details of the selected terminal."""
    names = names or {}
    label = Text.assemble((printable(member.name or member.id), "bold"), " ",
                          (printable(member.provider), "dim"), " ", status_text(member.status))
    if member.since is not None:
        label.append(f" {clock(member.since)}", style="dim")
    waits = [wait for wait in member.waiting_for if wait.kind != "prompt"]
    if waits:
        label.append(" · ", style="dim")
        label.append_text(waiting_text(waits, names))
    return label


def details_text(member: Member | None, pending: Sequence[Message] = (), removed: str | None = None,
                 empty: bool = False, names: Mapping[str, str] | None = None) -> Text:
    """The selected terminal: who it is, its status and why, what it waits for, its pending messages.
    With none selected: why (``removed``: it was just stopped; ``empty``: there is no terminal).
    ``names`` (terminal id -> name) shows callers, workers and senders by name."""
    names = names or {}
    if member is None:
        if removed:
            return Text(f"terminal {printable(removed)} was removed", style="dim")
        if empty:
            return Text("no terminals yet: `cao launch` starts a session", style="dim")
        return Text("select a terminal", style="dim")
    out = Text.assemble(
        (printable(member.name or member.id), "bold"), f" ({printable(member.id)})  session ",
        (printable(member.session_name), "bold"),
        f"\nprofile {printable(member.agent_profile)}  provider {printable(member.provider)}",
    )
    if member.caller_id:
        out.append(f"  started by {printable(names.get(member.caller_id, member.caller_id))}")
        if member.delegation:
            out.append(f" ({printable(member.delegation)})")
    out.append("\nstatus ")
    out.append_text(status_text(member.status))
    if member.since is not None:
        out.append(f" {since_text(member.since)}")
    if member.evidence:
        out.append(f"  ({printable(member.evidence)})", style="dim")
    waits = member.waiting_for
    if waits:
        out.append("\nwaits for ")
        out.append_text(waiting_text(waits, names))
    if member.working_directory:
        out.append(f"\nfolder {printable(member.working_directory)}", style="dim")
    if member.prompt is not None:
        out.append_text(prompt_text(member.prompt))
    if member.prompt_news is not None:
        out.append_text(news_text(member.prompt_news))
    for message in pending[:SHOWN_MESSAGES]:
        out.append(f"\n  from {printable(names.get(message.sender_id, message.sender_id))}: ", style="cyan")
        out.append(printable(one_line(message.body, BODY_WIDTH)))
    if len(pending) > SHOWN_MESSAGES:
        out.append(f"\n  and {max(member.pending_messages, len(pending)) - SHOWN_MESSAGES} more", style="dim")
    return out


def answer_words(prompt: PromptView, option: int | None, text: str | None) -> str:
    """An answer in a few words: ``1. Yes`` and/or the text typed."""
    parts = [f"{option}. {prompt.label(option) or '?'}"] if option else []
    if text is not None:
        parts.append(f"text {text!r}")
    return " with ".join(parts)


def prompt_text(prompt: PromptView) -> Text:
    """The prompt a terminal waits on, one line per part: what is asked, the tool and its arguments,
    the options by number (the default and those that take text marked), and the keys that answer."""
    out = Text("\n")
    out.append(f"prompt {printable(prompt.id)}", style="bold magenta")
    out.append(f" ({printable(prompt.kind)})  ")
    if prompt.title:
        out.append(f"{printable(prompt.title)}: ", style="bold")
    out.append(printable(prompt.question), style="bold")
    if prompt.tool:
        shown = "  ".join(f"{printable(k)}: {printable(v)}" for k, v in prompt.arguments)
        out.append(f"\n  {printable(prompt.tool)}", style="cyan")
        if shown:
            out.append(f"  {shown}")
        if not prompt.arguments_complete:
            out.append(" (cut on screen)", style="dim")
    for number, option in enumerate(prompt.options, 1):
        out.append(f"\n  {number}", style="bold")
        out.append(f" {printable(option.label)}")
        marks = [mark for mark, on in (("default", number == prompt.default),
                                       ("takes text", option.takes_text)) if on]
        if marks:
            out.append(f"  ({', '.join(marks)})", style="dim")
    keys = []
    if prompt.options:
        keys.append(f"1-{len(prompt.options)} picks an option" if len(prompt.options) > 1 else "1 picks it")
    if prompt.free_text:
        keys.append("a types an answer")
    if keys:
        out.append(f"\n  {', '.join(keys)}", style="dim")
    return out


def news_text(event: PromptChanged) -> Text:
    """The last answer or escalation of the terminal's prompts: who answered, and how."""
    if event.kind == "escalated":
        said = f"prompt {event.prompt.id} was escalated" + (f": {event.detail}" if event.detail else "")
    else:
        said = (f"prompt {event.prompt.id} answered by {event.by or 'someone'}: "
                f"{answer_words(event.prompt, event.option, event.text)}")
    return Text("\n" + printable(said), style="dim")


def screen_text(capture: str) -> Text:
    """A terminal's screen with its colours; trailing blank rows dropped."""
    return Text.from_ansi(capture.rstrip("\n"))


__all__ = ["answer_words", "details_text", "member_label", "news_text", "prompt_text", "screen_text",
           "session_label", "status_text", "waiting_text"]
