"""The team as the console holds it: a snapshot (``GET /team``'s shape) kept current by events.

``Team.from_json`` reads a snapshot and ``decode_event`` one event of ``GET /events``; both take what
the server sent without trusting it (a missing or mistyped field gives a default, an unknown event
gives None), because a console must survive a newer server. ``Team.apply(event)`` folds an event into
the team and says what changed, so the screen redraws only that:

- ``structure``: terminals or sessions came or went (the tree is rebuilt);
- ``terminals``: terminals whose row changed (their labels are redrawn);
- ``inboxes``: terminals whose pending messages changed (re-read by the caller: an event names one
  message, the row shows all of them);
- ``resnapshot``: the stream started again (``subscribed``), so anything may have happened meanwhile.

A terminal's ``prompt`` is the prompt it waits on (``PromptView``), set by the snapshot, the status
events and the prompt events; ``prompt_news`` is the last answer or escalation of one of its prompts,
kept until the next prompt opens.

Nothing here imports Textual, so it is tested without a screen.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Iterable, Mapping
from typing import Any

# Statuses as the server names them (cao_hookspecs.TerminalStatus); kept as text so a newer server's
# status shows as it is instead of breaking the console.
WAITING_USER_ANSWER = "waiting_user_answer"


def _text(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return value if isinstance(value, str) else default


def _optional_text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _seconds(data: Mapping[str, Any], key: str) -> float | None:
    """A time as seconds since the epoch: a number, or an ISO 8601 text (how records carry
    ``created_at``)."""
    value = data.get(key)
    if isinstance(value, str):
        try:
            parsed = datetime.datetime.fromisoformat(value)
        except ValueError:
            return None
        if parsed.tzinfo is None:  # the server writes UTC; a bare time is read as UTC too
            parsed = parsed.replace(tzinfo=datetime.timezone.utc)
        try:
            return parsed.timestamp()
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclasses.dataclass(frozen=True)
class Waiting:
    """One thing a terminal waits for: ``handoff`` (to ``worker_id``), ``messages`` (``count`` pending
    in its inbox) or ``prompt`` (an answer from a person)."""

    kind: str
    since: float | None = None
    worker_id: str | None = None
    count: int = 0

    @classmethod
    def from_json(cls, data: Any) -> Waiting | None:
        if not isinstance(data, Mapping) or not _text(data, "kind"):
            return None
        return cls(kind=_text(data, "kind"), since=_seconds(data, "since"),
                   worker_id=_optional_text(data, "worker_id"), count=_count(data, "count"))


@dataclasses.dataclass(frozen=True)
class OptionView:
    label: str
    takes_text: bool = False
    description: str = ""


@dataclasses.dataclass(frozen=True)
class PromptView:
    """The prompt a terminal waits on, as the server's ``OpenPrompt`` JSON says: ``id`` (answers name
    it), what is asked, the tool and its arguments, the options (numbered from 1) and the default."""

    id: str
    kind: str
    question: str
    title: str = ""
    tool: str | None = None
    arguments: tuple[tuple[str, str], ...] = ()
    arguments_complete: bool = True
    options: tuple[OptionView, ...] = ()
    default: int | None = None
    free_text: bool = False

    @classmethod
    def from_json(cls, data: Any) -> PromptView | None:
        inner = data.get("prompt") if isinstance(data, Mapping) else None
        if not isinstance(inner, Mapping) or not _text(data, "id"):
            return None
        raw_options = inner.get("options")
        options = tuple(OptionView(_text(o, "label"), o.get("takes_text") is True, _text(o, "description"))
                        for o in (raw_options if isinstance(raw_options, list) else ())
                        if isinstance(o, Mapping))
        raw_args = inner.get("arguments")
        arguments = (tuple((str(k), str(v)) for k, v in raw_args.items())
                     if isinstance(raw_args, Mapping) else ())
        default = inner.get("default")
        return cls(id=_text(data, "id"), kind=_text(inner, "kind"), question=_text(inner, "question"),
                   title=_text(inner, "title"), tool=_optional_text(inner, "tool"), arguments=arguments,
                   arguments_complete=inner.get("arguments_complete") is not False, options=options,
                   default=default if isinstance(default, int) and not isinstance(default, bool) else None,
                   free_text=inner.get("free_text") is True)

    def label(self, number: int | None) -> str:
        """The label of option ``number`` (from 1), or ''."""
        return self.options[number - 1].label if number and 0 < number <= len(self.options) else ""


@dataclasses.dataclass
class Member:
    """One terminal of the team, with its live status and what it waits for."""

    id: str
    session_name: str
    name: str = ""
    provider: str = ""
    agent_profile: str = ""
    caller_id: str | None = None
    working_directory: str | None = None
    created_at: float = 0.0
    status: str = "unknown"
    evidence: str = ""
    since: float | None = None
    pending_messages: int = 0
    delegation: str | None = None  # handoff or assign, when its caller started it so
    backend: str = "tmux"
    handoffs: dict[str, float | None] = dataclasses.field(default_factory=dict)  # worker id -> since
    prompt: PromptView | None = None
    prompt_news: PromptChanged | None = None

    @classmethod
    def from_json(cls, data: Any, session_name: str = "") -> Member | None:
        if not isinstance(data, Mapping) or not _text(data, "id"):
            return None
        delegation = data.get("delegation")
        member = cls(
            id=_text(data, "id"),
            session_name=_text(data, "session_name", session_name) or session_name,
            name=_text(data, "name"),
            provider=_text(data, "provider"),
            agent_profile=_text(data, "agent_profile"),
            caller_id=_optional_text(data, "caller_id"),
            working_directory=_optional_text(data, "working_directory"),
            created_at=_seconds(data, "created_at") or 0.0,
            status=_text(data, "status", "unknown") or "unknown",
            evidence=_text(data, "evidence"),
            since=_seconds(data, "since"),
            pending_messages=_count(data, "pending_messages"),
            delegation=(_text(delegation, "kind") or None) if isinstance(delegation, Mapping) else None,
            backend=_text(data, "backend", "tmux") or "tmux",
            prompt=PromptView.from_json(data.get("prompt")),
        )
        raw_waits = data.get("waiting_for")
        for wait in raw_waits if isinstance(raw_waits, list) else ():
            found = Waiting.from_json(wait)
            if found is not None and found.kind == "handoff" and found.worker_id:
                member.handoffs[found.worker_id] = found.since
        return member

    @property
    def waiting_for(self) -> list[Waiting]:
        """What it waits for, derived from its state so that every event keeps it right."""
        waits = [Waiting("handoff", since=since, worker_id=worker) for worker, since in self.handoffs.items()]
        if self.pending_messages:
            waits.append(Waiting("messages", count=self.pending_messages))
        if self.status == WAITING_USER_ANSWER:
            waits.append(Waiting("prompt", since=self.since))
        return waits


@dataclasses.dataclass
class Session:
    name: str
    status: str = ""
    working_directory: str | None = None
    members: dict[str, Member] = dataclasses.field(default_factory=dict)

    def ordered(self) -> list[Member]:
        """Its terminals, oldest first (the conductor leads)."""
        return sorted(self.members.values(), key=lambda m: (m.created_at, m.id))

    def roots_and_children(self) -> tuple[list[Member], dict[str, list[Member]]]:
        """The tree of who started whom: terminals with no caller in the session, and each terminal's
        workers, each list oldest first. A worker whose caller is gone moves up to the top level, and so
        does one caught in a cycle of callers (a damaged record must not hide a terminal)."""
        ordered = self.ordered()
        children: dict[str, list[Member]] = {}
        roots: list[Member] = []
        for member in ordered:
            caller = member.caller_id
            if caller and caller in self.members and caller != member.id and not self._cycle(member):
                children.setdefault(caller, []).append(member)
            else:
                roots.append(member)
        return roots, children

    def _cycle(self, member: Member) -> bool:
        seen = {member.id}
        caller = member.caller_id
        while caller and caller in self.members:
            if caller in seen:
                return True
            seen.add(caller)
            caller = self.members[caller].caller_id
        return False


@dataclasses.dataclass(frozen=True)
class Change:
    structure: bool = False
    terminals: frozenset[str] = frozenset()
    inboxes: frozenset[str] = frozenset()
    resnapshot: bool = False


# -- events ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Subscribed:
    at: float | None


@dataclasses.dataclass(frozen=True)
class TerminalCreated:
    member: Member


@dataclasses.dataclass(frozen=True)
class TerminalRemoved:
    terminal_id: str
    session_name: str


@dataclasses.dataclass(frozen=True)
class StatusChanged:
    terminal_id: str
    session_name: str
    status: str
    evidence: str
    since: float | None
    prompt: PromptView | None = None
    #: False when the event carries no ``prompt`` (a server older than typed prompts): keep the one held.
    says_prompt: bool = False


@dataclasses.dataclass(frozen=True)
class PromptChanged:
    """Something happened to a prompt: ``kind`` is opened, answered, refused, escalated or closed."""

    kind: str
    terminal_id: str
    prompt: PromptView
    by: str = ""
    option: int | None = None
    text: str | None = None
    detail: str = ""


@dataclasses.dataclass(frozen=True)
class MessageChanged:
    receiver_id: str
    sender_id: str
    state: str


@dataclasses.dataclass(frozen=True)
class Delegation:
    kind: str  # handoff or assign
    started: bool
    caller_id: str
    worker_id: str
    at: float | None


@dataclasses.dataclass(frozen=True)
class Overflow:
    reason: str


Event = (Subscribed | TerminalCreated | TerminalRemoved | StatusChanged | PromptChanged | MessageChanged
         | Delegation | Overflow)


def decode_event(data: Any) -> Event | None:
    """One event of ``GET /events`` (its JSON object), or None for what the console does not follow:
    pings, events of a newer server, and anything malformed."""
    if not isinstance(data, Mapping):
        return None
    kind = data.get("event")
    if kind == "subscribed":
        return Subscribed(_seconds(data, "at"))
    if kind in ("terminal_created", "terminal_removed"):
        record = data.get("terminal")
        member = Member.from_json(record)
        if member is None or not member.session_name:
            return None
        if kind == "terminal_created":
            return TerminalCreated(member)
        return TerminalRemoved(member.id, member.session_name)
    if kind == "status":
        terminal_id, status = _text(data, "terminal_id"), _text(data, "status")
        if not terminal_id or not status:
            return None
        return StatusChanged(terminal_id, _text(data, "session_name"), status, _text(data, "evidence"),
                             _seconds(data, "since"), PromptView.from_json(data.get("prompt")),
                             "prompt" in data)
    if kind == "prompt":
        terminal_id, prompt = _text(data, "terminal_id"), PromptView.from_json(data.get("prompt"))
        if not terminal_id or prompt is None:
            return None
        option = data.get("option")
        text = data.get("text")
        return PromptChanged(_text(data, "kind"), terminal_id, prompt, _text(data, "by"),
                             option if isinstance(option, int) and not isinstance(option, bool) else None,
                             text if isinstance(text, str) else None, _text(data, "detail"))
    if kind == "message":
        message = data.get("message")
        if not isinstance(message, Mapping) or not _text(message, "receiver_id"):
            return None
        return MessageChanged(_text(message, "receiver_id"), _text(message, "sender_id"),
                              _text(message, "state") or _text(message, "status"))
    if isinstance(kind, str) and kind.endswith(("_started", "_finished")):
        delegation, _, phase = kind.rpartition("_")
        caller, worker = _text(data, "caller_id"), _text(data, "worker_id")
        # No caller: a delegation a script started (``POST /handoff``); its worker still shows how.
        if delegation not in ("handoff", "assign") or not worker:
            return None
        return Delegation(delegation, phase == "started", caller, worker, _seconds(data, "at"))
    if kind == "overflow":
        return Overflow(_text(data, "reason"))
    return None


# -- the team --------------------------------------------------------------------------------------


@dataclasses.dataclass
class Team:
    sessions: dict[str, Session] = dataclasses.field(default_factory=dict)
    at: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> Team:
        """A snapshot in ``GET /team``'s shape; malformed sessions and terminals are left out."""
        team = cls(at=_seconds(data, "at") if isinstance(data, Mapping) else None)
        raw = data.get("sessions") if isinstance(data, Mapping) else None
        for row in raw if isinstance(raw, list) else ():
            if not isinstance(row, Mapping) or not _text(row, "name"):
                continue
            session = team.sessions.setdefault(_text(row, "name"), Session(_text(row, "name")))
            session.status = _text(row, "status")
            session.working_directory = _optional_text(row, "working_directory")
            terminals = row.get("terminals")
            for record in terminals if isinstance(terminals, list) else ():
                member = Member.from_json(record, session.name)
                if member is not None:
                    member.session_name = session.name
                    session.members[member.id] = member
        return team

    def members(self) -> Iterable[Member]:
        for session in self.sessions.values():
            yield from session.members.values()

    def names(self) -> dict[str, str]:
        """Terminal id -> name, to show who is meant where an event gives an id."""
        return {member.id: member.name for member in self.members() if member.name}

    def find(self, terminal_id: str) -> Member | None:
        for session in self.sessions.values():
            if terminal_id in session.members:
                return session.members[terminal_id]
        return None

    def apply(self, event: Event) -> Change:
        """Fold ``event`` in; what changed (see the module's docstring)."""
        if isinstance(event, Subscribed):
            return Change(resnapshot=True)
        if isinstance(event, TerminalCreated):
            return self._created(event.member)
        if isinstance(event, TerminalRemoved):
            return self._removed(event.terminal_id)
        if isinstance(event, StatusChanged):
            member = self.find(event.terminal_id)
            if member is None:
                return Change()
            member.status, member.evidence = event.status, event.evidence
            member.since = event.since if event.since is not None else member.since
            if event.says_prompt:
                member.prompt = event.prompt
            return Change(terminals=frozenset({member.id}))
        if isinstance(event, PromptChanged):
            return self._prompt(event)
        if isinstance(event, MessageChanged):
            if self.find(event.receiver_id) is None:
                return Change()
            return Change(inboxes=frozenset({event.receiver_id}))
        if isinstance(event, Delegation):
            return self._delegation(event)
        return Change()

    def _created(self, member: Member) -> Change:
        existing = self.find(member.id)
        if existing is not None and existing.session_name == member.session_name:
            # Already in the snapshot read after the stream started: keep what is live there.
            return Change()
        if existing is not None:
            self._removed(member.id)
        session = self.sessions.setdefault(member.session_name, Session(member.session_name))
        session.members[member.id] = member
        return Change(structure=True)

    def _removed(self, terminal_id: str) -> Change:
        # Nobody waits on a terminal that is gone, even one this console never saw.
        waiting = frozenset(m.id for m in self.members() if m.handoffs.pop(terminal_id, False) is not False)
        for name, session in list(self.sessions.items()):
            if session.members.pop(terminal_id, None) is None:
                continue
            if not session.members:  # a session ends with its last terminal
                del self.sessions[name]
            return Change(structure=True)
        return Change(terminals=waiting)

    def _prompt(self, event: PromptChanged) -> Change:
        member = self.find(event.terminal_id)
        if member is None:
            return Change()
        if event.kind == "opened":
            member.prompt, member.prompt_news = event.prompt, None
        elif event.kind == "closed":
            if member.prompt is not None and member.prompt.id == event.prompt.id:
                member.prompt = None
        elif event.kind in ("answered", "escalated"):
            member.prompt_news = event
        else:  # a refusal is told to whoever gave the answer, by its request
            return Change()
        return Change(terminals=frozenset({member.id}))

    def _delegation(self, event: Delegation) -> Change:
        changed = set()
        worker = self.find(event.worker_id)
        if worker is not None and event.started:
            worker.delegation = event.kind
            changed.add(worker.id)
        caller = self.find(event.caller_id)
        # Only a handoff blocks its caller; an assign returns at once.
        if caller is not None and event.kind == "handoff":
            if event.started:
                caller.handoffs[event.worker_id] = event.at
            else:
                caller.handoffs.pop(event.worker_id, None)
            changed.add(caller.id)
        return Change(terminals=frozenset(changed))


__all__ = [
    "Change", "Delegation", "Event", "Member", "MessageChanged", "OptionView", "Overflow", "PromptChanged",
    "PromptView", "Session", "StatusChanged", "Subscribed", "Team", "TerminalCreated", "TerminalRemoved",
    "Waiting", "decode_event",
]
