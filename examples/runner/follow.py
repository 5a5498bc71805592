"""Following a session while its agents work: who is doing what, every message, and when it is over.

Each terminal's status is followed with the server's long-poll (``wait_for_status``), so every change
arrives with the time the server first saw it. New terminals (workers started by handoff or assign)
and inbox messages are found by a light poll of the session. The run is over when the session has
been quiet for a while: every agent ready for input and no message waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cao_hookspecs import TerminalStatus
from cao_hookspecs.errors import AgentFailed, CaoError, NotFound, Timeout

if TYPE_CHECKING:
    from cao_hookspecs import KernelAPI, Message, Terminal

POLL = 0.2
# Each long-poll is short: the server keeps waiting on a terminal that is deleted meanwhile until the
# wait times out, and would hold its own shutdown for that long.
WAIT_CHUNK = 2.0
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

    @property
    def status(self) -> str | None:
        return self.statuses[-1][0] if self.statuses else None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "profile": self.profile, "caller_id": self.caller_id,
                "created": self.created, "removed": self.removed, "statuses": [list(s) for s in self.statuses]}


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
        self._watchers: dict[str, asyncio.Task[None]] = {}
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
            while True:
                await self._scan()
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

    async def close(self, *, exit_agents: bool = True, grace: float = 2.0) -> None:
        """Stop following. With ``exit_agents``, first ask every agent to quit with its CLI's exit command:
        each then leaves its ready status, which also ends the server-side waits of the watchers."""
        self._closing = True
        if exit_agents:
            for track in self.tracks.values():
                if track.removed is None:
                    with contextlib.suppress(CaoError):
                        await self.api.exit_terminal(track.id)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*self._watchers.values(), return_exceptions=True), grace)
        for task in self._watchers.values():
            task.cancel()
        await asyncio.gather(*self._watchers.values(), return_exceptions=True)

    async def _screen(self, terminal_id: str, rows: int = 25) -> str:
        try:
            text = await self.api.get_output(terminal_id, "full")
        except CaoError as exc:
            return f"(cannot read it: {exc})"
        return "\n".join([row for row in text.rstrip().splitlines()][-rows:])

    def _quiet(self, supervisor_id: str) -> bool:
        supervisor = self.tracks.get(supervisor_id)
        # On a loaded machine a fast supervisor may finish before its first status is read: having
        # been seen completed counts as having worked.
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

    async def _scan(self) -> None:
        try:
            terminals = await self.api.list_terminals(self.session)
        except NotFound:
            terminals = []
        now = time.time()
        current = {t.id for t in terminals}
        for terminal in terminals:
            if terminal.id not in self.tracks:
                self._add(terminal, now)
        for track in self.tracks.values():
            if track.removed is None and track.id not in current:
                self._gone(track, now)
        # A removed terminal's messages are read too while one was last seen waiting: a fast agent can
        # take a message, answer it and be deleted between two scans, and the message's last state
        # must still be the one it reached.
        waiting_for = {m.receiver_id for m in self.messages.values() if m.states[-1][0] in WAITING}
        for track in list(self.tracks.values()):
            if track.removed is None or track.id in waiting_for:
                await self._scan_messages(track.id)

    def _add(self, terminal: Terminal, now: float) -> None:
        created = terminal.created_at or now
        track = Track(id=terminal.id, name=terminal.name, profile=terminal.agent_profile,
                      caller_id=terminal.caller_id, created=created)
        self.tracks[terminal.id] = track
        by = f" (started by {self.label(terminal.caller_id)})" if terminal.caller_id else ""
        self._event(created, f"{self.label(terminal.id)} new terminal {terminal.name}{by}")
        self._watchers[terminal.id] = asyncio.ensure_future(self._watch(track))

    def _gone(self, track: Track, now: float) -> None:
        if track.removed is None:
            track.removed = now
            self._event(now, f"{self.label(track.id)} removed")

    async def _watch(self, track: Track) -> None:
        report = None
        told = False
        while True:
            try:
                if report is None:
                    report = await self.api.get_status(track.id)
                    self._record(track, report)
                current = str(getattr(report.status, "value", report.status))
                others = [s for s in TerminalStatus if s.value != current]
                try:
                    report = await self.api.wait_for_status(track.id, others, WAIT_CHUNK)
                except Timeout:
                    continue
                if self._closing and report.status == TerminalStatus.ERROR:
                    return  # asked to exit, and gone
                self._record(track, report)
            except NotFound:
                self._gone(track, time.time())
                return
            except AgentFailed:
                return  # it stays in error (or exited): the main loop reports it
            except Exception as exc:  # noqa: BLE001 - the main loop reports a server that went away
                # One failed request on a loaded machine must not freeze this terminal's last known
                # status for the rest of the run: read it afresh and go on.
                if self._closing:
                    return
                if not told:
                    told = True
                    self.say(time.time() - self.t0,
                             f"(lost track of {self.label(track.id)}: {type(exc).__name__}: {exc}; retrying)")
                report = None
                await asyncio.sleep(POLL)

    def _record(self, track: Track, report: Any) -> None:
        status = str(getattr(report.status, "value", report.status))
        since = float(report.since or time.time())
        track.evidence = report.evidence
        if track.status == status or self._closing:
            return
        track.statuses.append((status, since))
        self._event(since, f"{self.label(track.id)} {status}")

    async def _scan_messages(self, terminal_id: str) -> None:
        try:
            rows: list[Message] = await self.api.list_messages(terminal_id, limit=100)
        except CaoError:
            return
        now = time.time()
        for message in rows:
            state = str(getattr(message.state, "value", message.state))
            # The server's time of the message's last change, when it says: a poll sees it late.
            at = min(now, message.updated_at or message.created_at or now)
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
            elif track.states[-1][0] != state:
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
