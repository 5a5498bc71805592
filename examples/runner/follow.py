"""Following a session while its agents work: who is doing what, every message, and when it is over.

The follower subscribes to the server's event stream (``GET /events``) first, then reads what the
session already holds; from then on every terminal created or removed, every status change (with the
time the server first saw it) and every change of a message's state arrives as it happens, however
briefly a worker lives. The run is over when the session has been quiet for a while: every agent ready
for input and no message waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cao_hookspecs import TerminalStatus
from cao_hookspecs.errors import CaoError, NotFound

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI, Message, Terminal

POLL = 0.1
READY = frozenset({TerminalStatus.IDLE, TerminalStatus.COMPLETED})
WAITING = frozenset({"pending", "delivering"})
WORKED = frozenset({TerminalStatus.PROCESSING.value, TerminalStatus.COMPLETED.value})


class ExampleFailed(Exception):
    """The example did not finish: an agent failed, or it ran out of time."""


@dataclasses.dataclass
class Track:
    """What was seen of one terminal: its creation and statuses (the server's times) and its removal (the
    time this follower noticed it)."""

    id: str
    name: str
    profile: str
    caller_id: str | None
    created: float
    removed: float | None = None
    statuses: list[tuple[str, float]] = dataclasses.field(default_factory=list)
    evidence: str = ""
    # The kernel's timeline of the terminal (cao_hookspecs.timeline), read when the run is over.
    steps: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def status(self) -> str | None:
        return self.statuses[-1][0] if self.statuses else None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "profile": self.profile, "caller_id": self.caller_id,
                "created": self.created, "removed": self.removed,
                "statuses": [list(s) for s in self.statuses], "timeline": self.steps}


@dataclasses.dataclass
class MessageTrack:
    id: int
    sender_id: str
    receiver_id: str
    kind: str
    body: str
    states: list[tuple[str, float]] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "sender_id": self.sender_id, "receiver_id": self.receiver_id, "kind": self.kind,
                "body": self.body, "states": [list(s) for s in self.states]}


class SessionFollower:
    """Follows one session through ``api``; ``say(elapsed, text)`` prints one progress line."""

    def __init__(self, api: KernelAPI, session: str, *, t0: float, say: Callable[[float, str], None],
                 settle: float) -> None:
        self.api = api
        self.session = session
        self.t0 = t0
        self.say = say
        self.settle = settle
        self.tracks: dict[str, Track] = {}
        self.messages: dict[int, MessageTrack] = {}
        self._stream: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._early: dict[str, list[tuple[str, float, str]]] = {}  # statuses of terminals not added yet
        self._now: dict[str, str] = {}  # every terminal's latest status, recorded or not
        self._last_event = time.time()
        self._closing = False

    # -- labels -------------------------------------------------------------------------------------

    def label(self, terminal_id: str | None) -> str:
        track = self.tracks.get(terminal_id or "")
        return f"{track.profile} {track.id}" if track else (terminal_id or "?")

    def _event(self, at: float, text: str) -> None:
        self._last_event = time.time()
        if not self._closing:
            self.say(at - self.t0, text)

    # -- following ----------------------------------------------------------------------------------

    async def run(self, supervisor_id: str, timeout: float) -> None:
        """Follow until the session is quiet (after the supervisor has worked), or fail."""
        deadline = time.monotonic() + timeout
        try:
            await self.start()
            while True:
                if self._stream is not None and self._stream.done():
                    problem = self._stream.exception() if not self._stream.cancelled() else None
                    raise ExampleFailed(f"the server's event stream ended: {problem or 'closed'}")
                failed = [t for t in self.tracks.values() if t.removed is None and t.status == "error"]
                if failed:
                    raise ExampleFailed(f"{self.label(failed[0].id)} failed: {failed[0].evidence}\n"
                                        f"--- its screen ---\n{await self._screen(failed[0].id)}")
                if self._quiet(supervisor_id):
                    return
                if time.monotonic() > deadline:
                    busy = ", ".join(f"{self.label(t.id)} {t.status}" for t in self.tracks.values()
                                     if t.removed is None)
                    raise ExampleFailed(f"not finished within {timeout:g} s ({busy})")
                await asyncio.sleep(POLL)
        except BaseException:
            await self.close(exit_agents=False)
            raise

    async def start(self) -> None:
        """Subscribe to the event stream, then read what the session holds already."""
        if self._stream is None:
            self._stream = asyncio.ensure_future(self._follow_events())
            subscribed = asyncio.ensure_future(self._subscribed.wait())
            await asyncio.wait({self._stream, subscribed}, return_when=asyncio.FIRST_COMPLETED)
            subscribed.cancel()
            if self._stream.done():
                self._stream.result()  # raises what ended it
            await self._scan()

    async def read_timelines(self) -> None:
        """Read every terminal's timeline from the kernel (those removed already are kept there a while)."""
        for track in self.tracks.values():
            with contextlib.suppress(CaoError):
                events = await self.api.get_timeline(track.id)
                track.steps = [{"name": e.name, "at": e.at, "detail": dict(e.detail)} for e in events]

    async def close(self, *, exit_agents: bool = True, grace: float = 2.0) -> None:
        """Stop following. With ``exit_agents``, first ask every agent to quit with its CLI's exit command
        and give them ``grace`` seconds to go."""
        # What follows is shutting down, not the run: it stays out of the timeline.
        self._closing = True
        if exit_agents:
            leaving = [t.id for t in self.tracks.values() if t.removed is None]
            for terminal_id in leaving:
                with contextlib.suppress(CaoError):
                    await self.api.exit_terminal(terminal_id)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and any(self._now.get(i) in READY for i in leaving):
                await asyncio.sleep(POLL)
        if self._stream is not None:
            self._stream.cancel()
            await asyncio.gather(self._stream, return_exceptions=True)

    async def _screen(self, terminal_id: str, rows: int = 25) -> str:
        try:
            text = await self.api.get_output(terminal_id, "full")
        except CaoError as exc:
            return f"(cannot read it: {exc})"
        return "\n".join([row for row in text.rstrip().splitlines()][-rows:])

    def _quiet(self, supervisor_id: str) -> bool:
        supervisor = self.tracks.get(supervisor_id)
        # A fast supervisor may finish before the follower starts: having been seen completed counts as
        # having worked.
        if supervisor is None or not WORKED.intersection(s for s, _ in supervisor.statuses):
            return False
        live = [t for t in self.tracks.values() if t.removed is None]
        if any(t.status not in READY for t in live):
            return False
        # A message to a removed terminal will never be delivered: only live receivers count.
        receivers = {t.id for t in live}
        if any(m.states[-1][0] in WAITING and m.receiver_id in receivers for m in self.messages.values()):
            return False
        return time.time() - self._last_event >= self.settle

    # -- what the session held before the subscription ---------------------------------------------

    async def _scan(self) -> None:
        try:
            terminals = await self.api.list_terminals(self.session)
        except NotFound:
            terminals = []
        for terminal in terminals:
            if terminal.id not in self.tracks:
                self._add(terminal)
                try:
                    self._record(terminal.id, await self.api.get_status(terminal.id))
                except NotFound:
                    self._gone(terminal.id, time.time())
        for track in list(self.tracks.values()):
            try:
                rows: list[Message] = await self.api.list_messages(track.id, limit=100)
            except CaoError:
                continue
            for message in rows:
                self._message(message)

    # -- the event stream -----------------------------------------------------------------------------

    async def _follow_events(self) -> None:
        from cao_server.wire import message_from_json, terminal_from_json

        async for event in self.api.events(self.session):  # type: ignore[attr-defined]
            kind = event.get("event")
            if kind == "subscribed":
                self._subscribed.set()
            elif kind == "terminal_created":
                self._add(terminal_from_json(event["terminal"]))
            elif kind == "terminal_removed":
                self._gone(event["terminal"]["id"], float(event.get("at") or time.time()))
            elif kind == "status":
                self._status(event["terminal_id"], event["status"], float(event["since"]), event.get("evidence", ""))
            elif kind == "message":
                self._message(message_from_json(event["message"]))
            elif kind == "overflow":
                raise ExampleFailed("the follower fell too far behind the server's events")

    def _add(self, terminal: Terminal) -> None:
        if terminal.id in self.tracks:
            return
        created = terminal.created_at or time.time()
        track = Track(id=terminal.id, name=terminal.name, profile=terminal.agent_profile,
                      caller_id=terminal.caller_id, created=created)
        self.tracks[terminal.id] = track
        by = f" (started by {self.label(terminal.caller_id)})" if terminal.caller_id else ""
        self._event(created, f"{self.label(terminal.id)} new terminal {terminal.name}{by}")
        for status, since, evidence in self._early.pop(terminal.id, []):
            self._status(terminal.id, status, since, evidence)

    def _gone(self, terminal_id: str, at: float) -> None:
        track = self.tracks.get(terminal_id)
        if track is not None and track.removed is None:
            track.removed = at
            self._event(at, f"{self.label(track.id)} removed")

    def _record(self, terminal_id: str, report: Any) -> None:
        status = str(getattr(report.status, "value", report.status))
        self._status(terminal_id, status, float(report.since or time.time()), report.evidence)

    def _status(self, terminal_id: str, status: str, since: float, evidence: str) -> None:
        self._now[terminal_id] = status
        track = self.tracks.get(terminal_id)
        if track is None:
            # The kernel reports a new terminal's first statuses before it announces the terminal.
            self._early.setdefault(terminal_id, []).append((status, since, evidence))
            return
        if self._closing or track.removed is not None:
            return
        # The initial read and the stream may both report a change: keep one, in the server's order.
        if track.statuses and (track.status == status or since < track.statuses[-1][1]):
            return
        track.evidence = evidence
        track.statuses.append((status, since))
        self._event(since, f"{self.label(track.id)} {status}")

    def _message(self, message: Message) -> None:
        state = str(getattr(message.state, "value", message.state))
        # The server's time of the message's last change.
        at = message.updated_at or message.created_at or time.time()
        track = self.messages.get(message.id)
        if track is None:
            kind = str(getattr(message.orchestration_type, "value", message.orchestration_type))
            track = MessageTrack(id=message.id, sender_id=message.sender_id, receiver_id=message.receiver_id,
                                 kind=kind, body=message.body)
            self.messages[message.id] = track
            first = message.body.strip().splitlines()[0] if message.body.strip() else ""
            what = "task" if kind == "assign" else "message"
            self._event(at, f"\u2709 {what} #{message.id} {self.label(message.sender_id)} \u2192 "
                            f"{self.label(message.receiver_id)}: {_clip(first, 60)} [{state}]")
            track.states.append((state, at))
        elif track.states[-1][0] != state and at >= track.states[-1][1]:
            track.states.append((state, at))
            self._event(at, f"\u2709 #{message.id} {state}")

    def timeline(self) -> dict[str, Any]:
        return {"terminals": [t.to_json() for t in self.tracks.values()],
                "messages": [m.to_json() for m in sorted(self.messages.values(), key=lambda m: m.id)]}


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "\u2026"


@contextlib.asynccontextmanager
async def connected(settings: dict[str, str]) -> Any:
    """A ``KernelAPI`` client for the server the settings name, closed on exit."""
    from cao_server.client import connect

    api = connect(settings)
    try:
        await api.ping()
        yield api
    finally:
        await api.aclose()
