"""Property test of the delivery engine under any interleaving of sends, status changes, delivery
failures, crashes and restarts.

Real tmux cannot run thousands of interleavings in minutes, so this test runs the real kernel, the real
engine and the real SQLite inbox against a scripted in-process backend (the one double in the suite):
a "world" that outlives kernels like a tmux server does, whose terminals are busy after input until the
test says they finished. The same guarantees are checked on real tmux in test_messaging.py.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import threading
from collections import defaultdict

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from cao_hookspecs import (
    AgentProfile,
    BackendSpec,
    CreateTerminalRequest,
    InputMark,
    LaunchPlan,
    MessageState,
    OutputEvent,
    ProviderSpec,
    SessionInfo,
    StatusReport,
    TerminalInfo,
    hookimpl,
)
from cao_kernel.kernel import Kernel

N_TERMINALS = 3
TOKEN_RE = re.compile(r"<<m(\d+)>>")


class World:
    """Terminals that outlive kernels. Screens are "READY" or "BUSY"."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.terminals: dict[str, dict] = {}
        self.typed: list[tuple[str, str]] = []  # (terminal, text) in typing order
        self.watchers: dict[str, object] = {}
        self.fail_next: dict[str, int] = defaultdict(int)
        self.marks: dict[str, str] = {}  # the last marked input per terminal, recorded as it is typed

    def type(self, terminal_id: str, text: str, mark: str | None = None) -> None:
        with self.lock:
            self.typed.append((terminal_id, text))
            self.terminals[terminal_id]["screen"] = f"BUSY {len(self.typed)}"
            if mark is not None:
                self.marks[terminal_id] = mark

    def emit(self, terminal_id: str) -> None:
        callback = self.watchers.get(terminal_id)
        if callback is not None:
            callback(OutputEvent(terminal_id=terminal_id, kind="output"))


class ScriptedBackend:
    name = "scripted"

    def __init__(self, world: World) -> None:
        self.world = world

    def create_terminal(self, launch):
        with self.world.lock:
            self.world.terminals[launch.terminal_id] = {
                "screen": "READY", "session": launch.session_name, "window": launch.window_name,
                "meta": dict(launch.metadata),
            }

    def send_text(self, terminal_id, text, *, enter_count=1, submit_delay=0.0, mark=None):
        self.world.type(terminal_id, text, mark)
        self.world.emit(terminal_id)

    def input_mark(self, terminal_id):
        with self.world.lock:
            mark = self.world.marks.get(terminal_id)
        return None if mark is None else InputMark(mark=mark, submitted=True)

    def send_keys(self, terminal_id, keys):
        pass

    def capture(self, terminal_id, *, history=None):
        with self.world.lock:
            screen = self.world.terminals[terminal_id]["screen"]
            if history is None:
                return screen
            return "\n".join([text for tid, text in self.world.typed if tid == terminal_id] + [screen])

    def working_directory(self, terminal_id):
        return None

    def info(self, terminal_id):
        return None

    def kill_terminal(self, terminal_id):
        self.world.terminals.pop(terminal_id, None)

    def kill_session(self, session_name):
        for tid in [t for t, v in self.world.terminals.items() if v["session"] == session_name]:
            self.world.terminals.pop(tid)

    def list_sessions(self):
        return [SessionInfo(name=n) for n in sorted({v["session"] for v in self.world.terminals.values()})]

    def list_terminals(self, session_name=None):
        return [
            TerminalInfo(terminal_id=tid, session_name=v["session"], window_name=v["window"], metadata=v["meta"])
            for tid, v in self.world.terminals.items()
        ]

    def watch(self, terminal_id, on_event):
        self.world.watchers[terminal_id] = on_event

    def unwatch(self, terminal_id):
        self.world.watchers.pop(terminal_id, None)

    def close(self):
        self.world.watchers.clear()


def _detect(screen: str) -> StatusReport:
    if screen.startswith("READY"):
        return StatusReport(status="idle", evidence="ready")
    return StatusReport(status="processing", evidence="busy")


class ScriptedPlugin:
    def __init__(self, world: World) -> None:
        self.world = world

    @hookimpl
    def cao_register_backends(self):
        return [BackendSpec(name="scripted", factory=lambda ctx: ScriptedBackend(self.world))]

    @hookimpl
    def cao_register_providers(self):
        return [ProviderSpec(name="scripted", binary="true", launch=lambda ctx: LaunchPlan(argv=["true"]),
                             detect_status=_detect, extract_last_message=lambda text: text)]

    @hookimpl(tryfirst=True)
    def cao_deliver_message(self, terminal, message):
        with self.world.lock:
            if self.world.fail_next[terminal.id] > 0:
                self.world.fail_next[terminal.id] -= 1
                raise OSError("injected delivery failure")
        return None


@settings(max_examples=12, stateful_step_count=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
class DeliveryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.home = tempfile.mkdtemp(prefix="cao-prop-")
        self.world = World()
        self.loop = asyncio.new_event_loop()
        self.sent: list[tuple[int, str, str]] = []  # (token, sender, receiver)
        self.kernel = self._boot()
        self.ids: list[str] = []
        for _ in range(N_TERMINALS):
            term = self._run(self.kernel.create_session(CreateTerminalRequest(
                agent_profile="worker", working_directory=self.home)))
            self.ids.append(term.id)

    # -- helpers ----------------------------------------------------------------------------------

    def _boot(self) -> Kernel:
        import cao_inbox_sqlite.plugin

        kernel = Kernel(
            plugins=[ScriptedPlugin(self.world), cao_inbox_sqlite.plugin], load_entrypoints=False, home=self.home,
            settings={"CAO_TERMINAL_BACKEND": "scripted", "CAO_INBOX_RETRY_BASE": "0.001", "CAO_INPUT_SETTLE": "0.05",
                      "CAO_INBOX_MAX_ATTEMPTS": "3"},
        )
        kernel.add_profile(AgentProfile(name="worker", provider="scripted"))
        self._run(kernel.start())
        return kernel

    def _run(self, coro):
        return self.loop.run_until_complete(coro)

    def _settle(self, seconds: float = 0.005) -> None:
        self._run(asyncio.sleep(seconds))

    def _abandon(self) -> None:
        """The kernel process dies: its tasks stop where they are and nothing is cleaned up."""
        old = self.kernel
        self._run(old.delivery.aclose())
        for live in filter(None, map(old.terminals.get, self.ids)):
            live.tracker.detach()
            if live.refresh_task is not None:
                live.refresh_task.cancel()
        old.io.close(wait=True)
        old.delivery.store.close()
        self.world.watchers.clear()
        self.kernel = self._boot()

    def _messages(self):
        everything = self._run(self.kernel.delivery.list(None, limit=100_000))
        return [m for m in everything if m.sender_id != "cao"]

    # -- rules ------------------------------------------------------------------------------------

    @rule(sender_index=st.integers(0, N_TERMINALS - 1), offset=st.integers(1, N_TERMINALS - 1))
    def send(self, sender_index, offset):
        sender = self.ids[sender_index]
        receiver = self.ids[(sender_index + offset) % N_TERMINALS]
        self._send(sender, receiver)
        self._settle(0)

    def _send(self, sender: str, receiver: str) -> None:
        token = len(self.sent)
        self._run(self.kernel.send_message(sender, receiver, f"<<m{token}>>"))
        self.sent.append((token, sender, receiver))

    @rule(index=st.integers(0, N_TERMINALS - 1))
    def finish_turn(self, index):
        tid = self.ids[index]
        with self.world.lock:
            self.world.terminals[tid]["screen"] = "READY " + self.world.terminals[tid]["screen"][5:]
        self.world.emit(tid)
        self._settle()

    @rule(index=st.integers(0, N_TERMINALS - 1))
    def fail_next_delivery(self, index):
        self.world.fail_next[self.ids[index]] += 1

    @rule(pick=st.integers(0, 1000), typed=st.booleans())
    def crash_mid_delivery(self, pick, typed):
        """The kernel dies after claiming a message, before (typed=False) or after typing it."""
        # Draws never depend on timing-dependent state (hypothesis replays them): pick by index.
        pending = [m for m in self._messages() if m.state == MessageState.PENDING]
        busy = [t for t in self.ids if self.world.terminals[t]["screen"].startswith("BUSY")]
        if not pending and busy:
            # Make sure there is something in flight to interrupt.
            receiver = busy[pick % len(busy)]
            self._send(next(i for i in self.ids if i != receiver), receiver)
            pending = [m for m in self._messages() if m.state == MessageState.PENDING]
        if pending:
            # Claim the way the engine does: the receiver's oldest due message.
            receivers = sorted({m.receiver_id for m in pending})
            receiver = receivers[pick % len(receivers)]
            claimed = self._run(self.kernel.io.run(self.kernel.delivery.store.claim_next, receiver))
            if claimed is not None and typed:
                # Typed as a delivery types: the backend records the mark with the input.
                self.world.type(receiver, claimed.body, str(claimed.id))
        self._abandon()

    @rule()
    def graceful_restart(self):
        self._run(self.kernel.aclose())
        self.kernel = self._boot()

    @rule()
    def time_passes(self):
        self._settle(0.02)

    # -- invariants -------------------------------------------------------------------------------

    @invariant()
    def nothing_typed_twice_and_order_kept(self):
        seen: dict[int, int] = {}
        last_per_pair: dict[tuple[str, str], int] = {}
        by_token = {t: (s, r) for t, s, r in self.sent}
        for position, (tid, text) in enumerate(self.world.typed):
            if text.startswith("[cao]"):
                continue  # a dead-letter notice quoting the lost message
            for token in map(int, TOKEN_RE.findall(text)):
                assert token not in seen, f"message m{token} typed twice"
                seen[token] = position
                sender, receiver = by_token[token]
                assert receiver == tid
                previous = last_per_pair.get((sender, receiver), -1)
                assert token > previous, f"m{token} typed after m{previous} from the same sender"
                last_per_pair[(sender, receiver)] = token

    def teardown(self):
        try:
            # Let every terminal finish, again and again, until all mail has settled.
            self.world.fail_next.clear()
            for _ in range(400):
                for tid in self.ids:
                    with self.world.lock:
                        screen = self.world.terminals[tid]["screen"]
                        self.world.terminals[tid]["screen"] = "READY " + screen[5:]
                    self.world.emit(tid)
                self._settle(0.005)
                states = {m.state for m in self._messages()}
                if states <= {MessageState.DELIVERED, MessageState.DEAD}:
                    break
            messages = self._messages()
            by_body_token = {}
            for m in messages:
                for token in map(int, TOKEN_RE.findall(m.body)):
                    by_body_token[token] = m
            for token, _, _ in self.sent:
                assert token in by_body_token, f"m{token} was lost"
                assert by_body_token[token].state in (MessageState.DELIVERED, MessageState.DEAD), (
                    f"m{token} ended {by_body_token[token].state}"
                )
            typed_tokens = {int(t) for _, text in self.world.typed if not text.startswith("[cao]")
                            for t in TOKEN_RE.findall(text)}
            for token, _, _ in self.sent:
                if by_body_token[token].state == MessageState.DELIVERED:
                    assert token in typed_tokens, f"m{token} marked delivered but never typed"
            self.nothing_typed_twice_and_order_kept()
        finally:
            try:
                self._run(self.kernel.aclose())
            finally:
                self.loop.close()


TestDeliveryMachine = DeliveryMachine.TestCase


async def test_a_message_waiting_for_its_retry_holds_back_its_senders_later_ones():
    import cao_inbox_sqlite.plugin

    world, home = World(), tempfile.mkdtemp(prefix="cao-order-")
    kernel = Kernel(plugins=[ScriptedPlugin(world), cao_inbox_sqlite.plugin], load_entrypoints=False, home=home,
                    settings={"CAO_TERMINAL_BACKEND": "scripted", "CAO_INBOX_RETRY_BASE": "0.3",
                              "CAO_INPUT_SETTLE": "0.05"})
    kernel.add_profile(AgentProfile(name="worker", provider="scripted"))
    await kernel.start()
    try:
        request = CreateTerminalRequest(agent_profile="worker", working_directory=home)
        sender, other, receiver = [await kernel.create_session(request) for _ in range(3)]
        world.fail_next[receiver.id] = 1
        await kernel.send_message(sender.id, receiver.id, "<<m0>>")  # fails once, retried in ~0.3 s
        await asyncio.sleep(0.05)
        await kernel.send_message(sender.id, receiver.id, "<<m1>>")
        await kernel.send_message(other.id, receiver.id, "<<m2>>")  # another sender is not held back
        await asyncio.sleep(0.1)
        typed = [t for tid, text in world.typed if tid == receiver.id for t in TOKEN_RE.findall(text)]
        assert typed == ["2"], typed
        for _ in range(100):
            with world.lock:
                world.terminals[receiver.id]["screen"] = "READY"
            world.emit(receiver.id)
            await asyncio.sleep(0.02)
            typed = [t for tid, text in world.typed if tid == receiver.id for t in TOKEN_RE.findall(text)]
            if len(typed) == 3:
                break
        assert typed == ["2", "0", "1"], typed
    finally:
        await kernel.aclose()
