"""Chaos for the inbox: a real cao-server killed and restarted at random points while agents talk.

DESIGN promises that a message is persisted before its sender gets an id, is typed at most once, and
that a restart loses nothing. A :class:`Chaos` run checks that promise from the outside, the way a user
would meet a crash: a ``cao server`` subprocess on a private cao home and tmux server, mock agents
(``mock_cli``, which answers every input with a ``> MOCK: <input>`` row), messages sent among them over
HTTP, and the server stopped (SIGKILL, or SIGTERM) and started again at points a seeded
``random.Random`` picks: right after a send, in the middle of a burst of sends, while everything is idle,
and right after a send with the next server killed again while it starts. Some receivers are busy
(``__mock_sleep_N``) so that messages wait for them across a restart.

Once everything has drained, each message the server acknowledged (it returned an id) is looked for in
its receiver's scrollback: it must have been typed exactly once (or be ``uncertain``, a state a store
may use for "typed or not, nobody can tell"), and the server's record must agree with the pane
(delivered if and only if typed once). What the panes show is the truth; cao's records are checked
against it, never the other way round.

With ``tmux_crash`` the run ends by killing the tmux server itself while messages wait: each of them
must then be settled (delivered before the crash, or dead with a reason), nothing may stay pending or
delivering, the agents' programs must end with their tmux server, and the server must start again and
serve a new agent.

The run is seeded (the same seed makes the same choices; timing still differs) and always stops the
servers it started. :class:`ChaosResult` holds the counts; ``as_dict()`` is its JSON.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import itertools
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import httpx

from . import leftovers
from .server_process import CaoServer, server_env, spawn_cao_server, start_cao_server
from .tmux import PrivateTmux, private_tmux_socket

__all__ = ["Chaos", "ChaosPlan", "ChaosResult", "KillTiming", "TmuxCrash", "run_chaos"]

PLUGINS = ("tmux", "mock_cli", "inbox_sqlite", "server")
PROFILE = "chaos_agent"
# No MCP servers: what is under test is the inbox, and twenty MCP clients would only slow the start.
PROFILE_TEXT = f"""---
name: {PROFILE}
description: A mock agent that answers every input (chaos runs)
provider: mock_cli
---
Answer every input.
"""
#: When a stop comes: right after a burst of sends was acknowledged; as soon as the first send of a burst
#: is, the others on their way; once everything is delivered and idle; right after a burst, and then the
#: next server is killed too while it starts (and recovers), before the one after it comes up.
MOMENTS = ("after_send", "mid_burst", "idle", "restarting")
#: What a run counts in the panes (see :class:`ChaosResult`).
COUNTS = ("lost", "duplicated", "uncertain", "untruthful", "stored_unacknowledged", "typed_unacknowledged")
#: States a message stays in only while it still has to be delivered.
OPEN_STATES = frozenset({"pending", "delivering", "failed"})
UNCERTAIN = "uncertain"
REPLY_PREFIX = "> MOCK:"
RESTART_ATTEMPTS = 3
STOP_PATIENCE = 15.0
FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()


@dataclasses.dataclass(frozen=True)
class ChaosPlan:
    """What one run does.

    :param kills: the signal of each stop, in order (``SIGKILL``: a crash; ``SIGTERM``: a clean stop).
    :param burst: messages sent at once (from a thread pool) between two looks at the plan.
    :param busy_share: the chance that a burst first makes some of its receivers busy.
    :param tmux_crash: messages of a last phase that kills the tmux server under them (0: no such phase).
    :param tmux_crash_while_down: kill the tmux server while the cao server is down (killed just
        before), instead of under the running server.
    """

    seed: int = 1
    agents: int = 20
    messages: int = 150
    kills: tuple[str, ...] = ("SIGKILL", "SIGKILL", "SIGTERM", "SIGKILL")
    burst: int = 6
    busy_share: float = 0.5
    busy_seconds: tuple[float, float] = (0.3, 1.5)
    tmux_crash: int = 0
    tmux_crash_while_down: bool = False
    drain_timeout: float = 60.0


@dataclasses.dataclass
class KillTiming:
    """One stop and start of the server: ``stop_s`` from the signal to the process's end, ``start_s`` from
    the spawn to a healthy server (every attempt), ``attempts`` starts it took (1 when it came up), and
    ``left_delivering`` the messages the stopped server left in the middle of their delivery (what the
    next server's recovery had to settle)."""

    signal: str
    moment: str
    acknowledged_before: int
    left_delivering: int = 0
    killed_starting_after_s: float | None = None  # "restarting": when the starting server was killed
    stop_s: float = 0.0
    stopped_on_signal: bool = True
    start_s: float = 0.0
    attempts: int = 0


@dataclasses.dataclass
class TmuxCrash:
    """The phase that kills the tmux server: its messages' end states, and how the server took it."""

    acknowledged: int = 0
    delivered: int = 0
    dead: int = 0
    unsettled: int = 0  # still pending, delivering or failed once the server was restarted
    dead_without_reason: int = 0
    settle_s: float | None = None  # tmux killed -> every message settled by the running server
    orphans: list[str] = dataclasses.field(default_factory=list)  # programs that outlived tmux
    fresh_agent_typed: int = 0  # times a message to an agent created after the restart was typed


@dataclasses.dataclass
class ChaosResult:
    """What a run found. ``problems`` names each message that broke the promise.

    ``lost``: never typed (and not ``uncertain``); ``duplicated``: typed more than once; ``untruthful``:
    recorded ``delivered`` but not typed once, or typed once but recorded otherwise. These count every
    message the server stored: the ``acknowledged`` ones, and the ``stored_unacknowledged`` ones whose
    answer the server died before giving.
    """

    plan: ChaosPlan
    acknowledged: int = 0
    unacknowledged: int = 0  # sends that got no id (the server went away under them)
    stored_unacknowledged: int = 0  # of those, stored all the same (so owed, and counted like the rest)
    typed_unacknowledged: int = 0  # of those, typed
    lost: int = 0
    duplicated: int = 0
    uncertain: int = 0
    untruthful: int = 0  # the server's state disagrees with the pane
    failed_restarts: int = 0
    drain_s: float | None = None
    elapsed_s: float = 0.0
    kills: list[KillTiming] = dataclasses.field(default_factory=list)
    tmux_crash: TmuxCrash | None = None
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        crash = self.tmux_crash
        crash_ok = crash is None or (crash.unsettled == crash.dead_without_reason == 0 and not crash.orphans
                                     and crash.fresh_agent_typed == 1)
        return (self.lost == self.duplicated == self.untruthful == self.failed_restarts == 0
                and all(kill.stopped_on_signal for kill in self.kills) and crash_ok)

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["ok"] = self.ok
        return data


@dataclasses.dataclass
class _Sent:
    token: str
    sender: str
    receiver: str
    body: str
    id: int | None = None  # the server's id: None until (unless) it acknowledged the message


@dataclasses.dataclass(frozen=True)
class _Agent:
    id: str
    session: str
    window: str


class Chaos:
    """One run of ``plan`` in ``folder`` (the cao home and the agents' working folder go there)."""

    def __init__(self, plan: ChaosPlan, folder: Path) -> None:
        self.plan = plan
        self.rng = random.Random(plan.seed)
        self.folder = folder
        self.home = folder / "home"
        self.workdir = folder / "project"
        self.result = ChaosResult(plan=plan)
        self.sent: list[_Sent] = []
        self.agents: list[_Agent] = []
        self.server: CaoServer | None = None
        self.tmux: PrivateTmux | None = None
        self.env: dict[str, str] = {}
        self.port = 0
        self.http: httpx.Client | None = None

    # -- the run ----------------------------------------------------------------------------------

    def run(self) -> ChaosResult:
        started = time.monotonic()
        (self.home / "agent-store").mkdir(parents=True, exist_ok=True)
        (self.home / "agent-store" / f"{PROFILE}.md").write_text(PROFILE_TEXT, encoding="utf-8")
        self.workdir.mkdir(parents=True, exist_ok=True)
        with private_tmux_socket() as tmux:
            self.tmux = tmux
            self.env = server_env(self.home, tmux, PLUGINS)
            # One port for every start, as a user's server has: an agent is told the address once.
            self.port = _free_port()
            try:
                self._start()
                self.http = httpx.Client(base_url=self.server.url, headers=self.server.headers,
                                         trust_env=False, timeout=30)
                self._create_agents()
                self._traffic()
                self.result.drain_s = self._drain()
                self._count()
                if self.plan.tmux_crash:
                    self._crash_tmux()
            finally:
                self._stop(signal.SIGTERM)
                if self.http is not None:
                    self.http.close()
        self.result.elapsed_s = round(time.monotonic() - started, 3)
        return self.result

    # -- the server -------------------------------------------------------------------------------

    def _start(self) -> tuple[float, int]:
        """Start the server until it is healthy: the seconds from the first spawn, and the starts it took.
        A start that does not come up healthy counts as a failed restart; after ``RESTART_ATTEMPTS`` the
        run stops."""
        spawned = time.monotonic()
        for attempt in range(1, RESTART_ATTEMPTS + 1):
            try:
                self.server = start_cao_server(self.home, self.workdir, self.env, port=self.port)
                healthy = httpx.get(self.server.url + "/health", trust_env=False, timeout=10).status_code
            except (AssertionError, httpx.TransportError) as exc:
                healthy, why = 0, str(exc)
            else:
                why = f"/health answered {healthy}"
            if healthy == 200:
                return time.monotonic() - spawned, attempt
            self.result.failed_restarts += 1
            self.result.problems.append(f"start {attempt} failed: {why[-500:]}")
            self._stop(signal.SIGKILL)
        raise AssertionError(f"cao server did not come up healthy in {RESTART_ATTEMPTS} starts: "
                             f"{self.result.problems[-1]}")

    def _stop(self, how: signal.Signals) -> tuple[float, bool]:
        """Stop the server with ``how``: SIGKILL goes to its whole process group, as when a machine kills
        a service; SIGTERM to the server alone, which has ``STOP_PATIENCE`` seconds to end."""
        server, self.server = self.server, None
        if server is None or server.proc.poll() is not None:
            if server is not None:
                server.close()
            return 0.0, True
        began = time.monotonic()
        if how == signal.SIGKILL:
            os.killpg(server.proc.pid, signal.SIGKILL)
        else:
            server.proc.send_signal(how)
        try:
            server.proc.wait(STOP_PATIENCE)
            stopped = True
        except subprocess.TimeoutExpired:  # it hangs: end it all
            os.killpg(server.proc.pid, signal.SIGKILL)
            server.proc.wait(5)
            stopped = False
        took = time.monotonic() - began
        server.close()
        return took, stopped

    def _restart(self, how: str, moment: str, while_down: Callable[[], object] | None = None) -> None:
        """Stop the server with signal ``how``, run ``while_down``, start it again; note the timings."""
        kill = KillTiming(signal=how, moment=moment, acknowledged_before=self._acknowledged())
        took, kill.stopped_on_signal = self._stop(signal.Signals[how])
        if while_down is not None:
            while_down()
        if not kill.stopped_on_signal:
            self.result.problems.append(f"the server did not stop within {STOP_PATIENCE:g} s of {how}")
        kill.left_delivering = self._left_delivering()
        if moment == "restarting":
            kill.killed_starting_after_s = self._crash_start()
        started, kill.attempts = self._start()
        kill.stop_s, kill.start_s = round(took, 3), round(started, 3)
        self.result.kills.append(kill)

    def _crash_start(self) -> float:
        """Spawn a server and SIGKILL it (with whatever it started) a moment later, likely in the middle
        of its start-up and recovery; returns that moment, in seconds after the spawn."""
        delay = round(self.rng.uniform(0.05, 0.8), 3)
        starting = spawn_cao_server(self.home, self.workdir, self.env, port=self.port)
        try:
            time.sleep(delay)  # a point in the start-up, not a wait for anything
            with contextlib.suppress(ProcessLookupError):
                os.killpg(starting.proc.pid, signal.SIGKILL)
            starting.proc.wait(10)
        finally:
            starting.close()
        return delay

    def _left_delivering(self) -> int:
        """Messages in ``delivering`` in the inbox database, read while no server runs (so nothing moves).

        The chaos is only worth something if some stops land in the middle of a delivery; this shows it
        did. Read with the standard library, read-only, from the SQLite inbox's default file."""
        path = self.home / "db" / "inbox.sqlite3"
        if not path.exists():
            return 0
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
            return db.execute("SELECT count(*) FROM messages WHERE state = 'delivering'").fetchone()[0]

    # -- agents -----------------------------------------------------------------------------------

    def _create_agents(self) -> None:
        request = {"agent_profile": PROFILE, "working_directory": str(self.workdir)}
        first = _ok(self.http.post("/sessions", json={**request, "session_name": "chaos"}), 201)
        path = f"/sessions/{first['session_name']}/terminals"
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            rest = list(pool.map(lambda _: _ok(self.http.post(path, json=request), 201),
                                 range(self.plan.agents - 1)))
        self.agents = [_Agent(row["id"], row["session_name"], row["name"]) for row in [first, *rest]]

    def _make_busy(self, agents: Iterable[str], seconds: float | None = None) -> None:
        """Type a sleep into each agent (``seconds`` long, or as long as the plan's range gives), so that
        what is sent to it waits (a refusal is no failure: an agent may be between states)."""
        low, high = self.plan.busy_seconds
        for agent in agents:
            sleep = seconds if seconds is not None else round(self.rng.uniform(low, high), 1)
            try:
                self.http.post(f"/terminals/{agent}/input", json={"message": f"__mock_sleep_{sleep}"})
            except httpx.TransportError:
                pass

    # -- traffic ----------------------------------------------------------------------------------

    def _plan_kills(self) -> dict[int, tuple[str, str]]:
        """Message counts after which the server is stopped -> (signal, moment). Every moment comes up
        before any repeats, in an order of the seed's."""
        plan = self.plan
        moments = list(itertools.islice(itertools.cycle(MOMENTS), len(plan.kills)))
        self.rng.shuffle(moments)
        spots = range(plan.burst, max(plan.burst + 1, plan.messages - plan.burst))
        points = sorted(self.rng.sample(spots, min(len(plan.kills), len(spots))))
        return {point: (how, moment) for point, how, moment in zip(points, plan.kills, moments, strict=False)}

    def _traffic(self) -> None:
        kills = self._plan_kills()
        with concurrent.futures.ThreadPoolExecutor(self.plan.burst) as pool:
            while len(self.sent) < self.plan.messages:
                upcoming = [point for point in kills if point > len(self.sent)]
                room = min([self.plan.burst, self.plan.messages - len(self.sent),
                            *(point - len(self.sent) for point in upcoming[:1])])
                burst = [self._new_message() for _ in range(room)]
                if self.rng.random() < self.plan.busy_share:
                    receivers = sorted({m.receiver for m in burst})
                    self._make_busy(self.rng.sample(receivers, self.rng.randint(1, len(receivers))))
                kill = kills.get(len(self.sent))
                if kill is not None and kill[1] == "mid_burst":
                    self._send_and_kill(pool, burst, kill[0])
                    continue
                list(pool.map(self._send, burst))
                if kill is not None:
                    if kill[1] == "idle":
                        self._drain()
                    self._restart(*kill)

    def _new_message(self) -> _Sent:
        """The next message, drawn here (on the driver's thread, so that the seed decides it)."""
        sender, receiver = self.rng.sample(self.agents, 2)
        token = f"chaos{self.plan.seed}x{len(self.sent):05d}"
        # Bodies of different lengths: short ones, and pastes long enough to wrap on the receiver's screen.
        words = " ".join(self.rng.choice(FILLER) for _ in range(self.rng.randint(0, 40)))
        message = _Sent(token=token, sender=sender.id, receiver=receiver.id, body=f"{token} {words}".strip())
        self.sent.append(message)
        return message

    def _send(self, message: _Sent) -> None:
        try:
            response = self.http.post(f"/terminals/{message.sender}/send_message",
                                      json={"receiver_id": message.receiver, "message": message.body})
        except httpx.TransportError:
            return
        if response.status_code == 200:
            message.id = response.json()["id"]

    def _send_and_kill(self, pool: concurrent.futures.Executor, burst: list[_Sent], how: str) -> None:
        """Send the burst and stop the server as soon as the first send is acknowledged, the others still
        on their way."""
        futures = [pool.submit(self._send, m) for m in burst]
        for _ in concurrent.futures.as_completed(futures):
            if any(m.id is not None for m in burst):
                break
        self._restart(how, "mid_burst")
        concurrent.futures.wait(futures)

    def _acknowledged(self) -> int:
        return sum(m.id is not None for m in self.sent)

    # -- the end ----------------------------------------------------------------------------------

    def _states(self) -> dict[int, dict[str, Any]]:
        """Every message the server holds for the agents, by id."""
        rows: dict[int, dict[str, Any]] = {}
        for agent in self.agents:
            for row in _ok(self.http.get(f"/terminals/{agent.id}/inbox/messages", params={"limit": 1000})):
                rows[row["id"]] = row
        return rows

    def _drain(self) -> float:
        """Wait until no message is left to deliver and every agent is done answering; the seconds it
        took."""
        began = time.monotonic()
        deadline = began + self.plan.drain_timeout
        while True:
            states = self._states()
            waiting = [i for i, row in states.items() if row["status"] in OPEN_STATES]
            if not waiting:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(waiting)} messages still undelivered after "
                                     f"{self.plan.drain_timeout:g} s: {sorted(waiting)[:20]}")
            time.sleep(0.1)
        for agent in self.agents:
            self._wait_ready(agent.id, deadline)
        return round(time.monotonic() - began, 3)

    def _wait_ready(self, agent: str, deadline: float) -> None:
        left = max(1.0, deadline - time.monotonic())
        _ok(self.http.get(f"/terminals/{agent}/wait", params={"status": "completed,idle", "timeout": left},
                          timeout=left + 10))

    def _typed(self) -> collections.Counter[str]:
        """How many times each token was answered by the mock agents (their ``> MOCK:`` rows)."""
        seen: collections.Counter[str] = collections.Counter()
        pattern = re.compile(rf"\bchaos{self.plan.seed}x\d{{5}}\b")
        for agent in self.agents:
            for row in scrollback(self.tmux, agent.session, agent.window).splitlines():
                if row.startswith(REPLY_PREFIX):
                    seen.update(pattern.findall(row))
        return seen

    def _count(self) -> None:
        """Compare every message the server stored with its receiver's pane. A message marked delivered
        may still be on its way to the screen: the comparison is made again, for a few seconds, while some
        look lost or untruthful (a second typing only adds, so waiting can hide no duplicate)."""
        deadline = time.monotonic() + 5
        while True:
            verdict = self._verdict(self._typed(), self._states())
            if verdict["lost"] == verdict["untruthful"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        for name in COUNTS:
            setattr(self.result, name, verdict[name])
        self.result.acknowledged = self._acknowledged()
        self.result.unacknowledged = len(self.sent) - self.result.acknowledged
        self.result.problems.extend(verdict["problems"])

    def _verdict(self, typed: collections.Counter[str], states: dict[int, dict[str, Any]]) -> dict[str, Any]:
        """The counts of :data:`COUNTS`, and a line for each message at fault. A send that got no answer
        may still have been stored (the server died before it could answer): then it is owed as well."""
        by_token = {row["message"].split(maxsplit=1)[0]: row for row in states.values() if row["message"]}
        counts: dict[str, Any] = dict.fromkeys(COUNTS, 0)
        problems = []
        for message in self.sent:
            times = typed[message.token]
            row = states.get(message.id) if message.id is not None else by_token.get(message.token)
            if message.id is None:
                counts["stored_unacknowledged"] += row is not None
                counts["typed_unacknowledged"] += times > 0
                if row is None:
                    continue  # never stored: nothing is owed (and nothing can have been typed)
            state = row["status"] if row is not None else "missing"
            faults = _faults(times, state)
            for fault in faults:
                counts[fault] += 1
            if faults:
                acknowledged = "" if message.id is not None else ", unacknowledged"
                problems.append(f"{message.token} (message {row['id'] if row else '?'}{acknowledged}) to "
                                f"{message.receiver}: typed {times} times, state {state}")
        counts["problems"] = problems
        return counts

    # -- the tmux server dies ---------------------------------------------------------------------

    def _crash_tmux(self) -> None:
        crash = self.result.tmux_crash = TmuxCrash()
        first = len(self.sent)
        # Half the agents busy for longer than the phase: their messages are waiting when tmux dies.
        self._make_busy(self.rng.sample([a.id for a in self.agents], len(self.agents) // 2), seconds=10)
        with concurrent.futures.ThreadPoolExecutor(self.plan.burst) as pool:
            list(pool.map(self._send, [self._new_message() for _ in range(self.plan.tmux_crash)]))
        phase = [m for m in self.sent[first:] if m.id is not None]
        crash.acknowledged = len(phase)
        if self.plan.tmux_crash_while_down:
            # Both die together (a machine's crash): the next server finds the messages and no terminals.
            self._restart("SIGKILL", "tmux_gone_while_down", while_down=lambda: self._kill_tmux(crash))
        else:
            killed = self._kill_tmux(crash)
            crash.settle_s = self._settle(phase, killed)
            self._restart("SIGKILL", "tmux_gone")
        states = self._states_of(phase)
        for row in states.values():
            crash.delivered += row["status"] == "delivered"
            crash.dead += row["status"] == "dead"
            crash.unsettled += row["status"] in OPEN_STATES
            crash.dead_without_reason += row["status"] == "dead" and not row.get("last_error")
        crash.fresh_agent_typed = self._fresh_agent()

    def _kill_tmux(self, crash: TmuxCrash) -> float:
        """SIGKILL the tmux server, note the programs that outlive it; returns when it was killed."""
        pid = self.tmux.server_pid()
        killed = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        crash.orphans = self._orphans()
        return killed

    def _states_of(self, messages: list[_Sent]) -> dict[int, dict[str, Any]]:
        """The rows of ``messages``, read per receiver (their terminals are gone, their inboxes are not)."""
        rows: dict[int, dict[str, Any]] = {}
        for receiver in {m.receiver for m in messages}:
            for row in _ok(self.http.get(f"/terminals/{receiver}/inbox/messages", params={"limit": 1000})):
                rows[row["id"]] = row
        return {m.id: rows.get(m.id, {"status": "missing"}) for m in messages}

    def _settle(self, messages: list[_Sent], since: float, timeout: float = 15.0) -> float | None:
        """Seconds from ``since`` until none of ``messages`` is left to deliver; None when some still are
        after ``timeout`` seconds."""
        while time.monotonic() < since + timeout:
            if all(row["status"] not in OPEN_STATES for row in self._states_of(messages).values()):
                return round(time.monotonic() - since, 3)
            time.sleep(0.1)
        return None

    def _orphans(self) -> list[str]:
        """Programs of the dead tmux server's panes still running (they are ended here, and named)."""
        server_pid = self.server.proc.pid if self.server else -1
        found = [left for left in leftovers.left_behind([self.tmux.tmpdir, self.tmux.socket_path])
                 if server_pid not in (left.proc.pid, left.proc.sid)]
        leftovers.end(found)
        return [str(left) for left in found]

    def _fresh_agent(self) -> int:
        """Times a message to a new agent (on a new tmux server) was typed: the restarted server works."""
        request = {"agent_profile": PROFILE, "working_directory": str(self.workdir), "session_name": "after"}
        row = _ok(self.http.post("/sessions", json=request), 201)
        agent = _Agent(row["id"], row["session_name"], row["name"])
        token = f"chaos{self.plan.seed}fresh"
        sent = _ok(self.http.post(f"/terminals/{agent.id}/inbox/messages",
                                  json={"sender_id": "chaos", "message": token}))
        deadline = time.monotonic() + 30
        while _ok(self.http.get(f"/terminals/{agent.id}/inbox/messages", params={"limit": 10})
                  )[0]["status"] != "delivered" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sent["id"]
        self._wait_ready(agent.id, deadline)
        rows = scrollback(self.tmux, agent.session, agent.window).splitlines()
        return sum(row.count(token) for row in rows if row.startswith(REPLY_PREFIX))


def _faults(times: int, state: str) -> list[str]:
    """What is wrong with an acknowledged message typed ``times`` times and recorded in ``state``."""
    faults = []
    if times > 1:
        faults.append("duplicated")
    if state == UNCERTAIN:
        return [*faults, "uncertain"]
    if times == 0:
        faults.append("lost")
    if (state == "delivered") != (times == 1):
        faults.append("untruthful")
    return faults


def scrollback(tmux: PrivateTmux, session: str, window: str) -> str:
    """A window's whole scrollback, wrapped rows joined."""
    return tmux.run("capture-pane", "-p", "-J", "-S", "-", "-t", f"{session}:{window}").stdout


def _ok(response: httpx.Response, status: int = 200) -> Any:
    if response.status_code != status:
        raise AssertionError(f"{response.request.method} {response.request.url.path} answered "
                             f"{response.status_code}: {response.text[:300]}")
    return response.json()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_chaos(plan: ChaosPlan, folder: Path | None = None) -> ChaosResult:
    """Run ``plan`` in ``folder`` (default: a scratch folder under /tmp, removed afterwards: tmux and
    UNIX socket paths must stay short)."""
    if folder is not None:
        return Chaos(plan, folder).run()
    import shutil

    scratch = Path(tempfile.mkdtemp(prefix="cao-chaos-", dir="/tmp"))
    try:
        return Chaos(plan, scratch).run()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
