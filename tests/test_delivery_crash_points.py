"""Crash the kernel at every step of a delivery, and check what survives against a model of the contract.

test_delivery_properties.py crashes a kernel in two places; here every step on the delivery path is a
place it may die: before and after each store call (``claim_next``, ``list``, ``claim``,
``mark_delivered``, ``mark_failed``, ``release``, ``receivers_with_pending``) and each backend call
(``send_text`` before the paste, between the paste and its Enter, after the Enter; ``input_mark``;
the owed Enter a recovery presses). A drawn "die at the k-th step from now" freezes the kernel at that
exact step: its one I/O thread blocks there, so nothing else it would do happens, then it is abandoned
without cleanup and a new kernel boots on the same SQLite file and the same world. The next kernel may
be drawn to die too, while it is still settling what the dead one left.

Every store and backend call the kernel makes is recorded where it crosses the contract, and a
reference model replays the records with the meaning the contract gives them (the ``InboxStore`` and
``TerminalBackend`` docstrings, "A delivery cut short" in docs/architecture.md), never the engine's
code: each message's state, attempts, owner (the kernel that claimed it) and how often it was typed and
submitted. The model refuses what the contract forbids as it happens (typing a message twice, typing
one this kernel did not claim, typing out of a sender's order, recording delivered what was not typed
and submitted, putting back or failing what went in, pressing an Enter nothing owed, claiming for a
receiver before an earlier kernel's delivery to it is settled); after each step the real store must
match the model, and nothing may be ``delivering`` except under the live kernel.

The plain tests at the end replay, deterministically, cases the machine found.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading

import attrs
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from cao_hookspecs import (
    AgentProfile,
    BackendSpec,
    CreateTerminalRequest,
    InboxStoreSpec,
    InputMark,
    MessageState,
    hookimpl,
)
from cao_kernel.delivery import SYSTEM_SENDER
from cao_kernel.kernel import Kernel

from .test_delivery_properties import N_TERMINALS, ScriptedBackend, ScriptedPlugin, World

# The store calls a delivery or a recovery makes: each is a crash point before and after.
GATED_STORE_CALLS = ("claim_next", "list", "claim", "mark_delivered", "mark_failed", "release",
                     "receivers_with_pending")


class Died(BaseException):
    """Raised in a dead kernel's I/O thread: the process is gone and does nothing more.

    A BaseException, so no handler in the kernel mistakes it for a failed step and acts on it."""


class Gate:
    """The crash points of every kernel life, and the record of what each life did at the contract."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.countdown: int | None = None  # crash points still to pass before the kernel dies
        self.fired: str | None = None  # the point the current kernel is frozen at
        self.at: list | None = None  # [point, n]: die at the n-th time the kernel reaches that point
        self.dead: set[int] = set()
        self._frozen = threading.Event()
        self.trace: list[tuple] = []  # (life, call, *arguments, result), in the order they happened
        # Held while a call is made and recorded, and while the test reads the store and the record: what
        # the test reads of the store has always been recorded.
        self.step = threading.RLock()

    def point(self, life: int, where: str) -> None:
        """A place the kernel of ``life`` may die: when the countdown runs out, it blocks here for good."""
        with self.lock:
            if life in self.dead:
                raise Died(where)
            if self.at is not None and self.at[0] == where:
                self.at[1] -= 1
                if not self.at[1]:
                    self.at, self.countdown = None, 0
            if self.countdown is None:
                return
            if self.countdown > 0:
                self.countdown -= 1
                return
            self.countdown = None
            self.fired = where
            frozen = self._frozen = threading.Event()
        frozen.wait()
        raise Died(where)

    def alive(self, life: int) -> None:
        """Raises ``Died`` in a dead kernel's thread."""
        with self.lock:
            if life in self.dead:
                raise Died("dead")

    def record(self, life: int, *event: object) -> None:
        with self.lock:
            if life in self.dead:
                raise Died(str(event[0]))
            self.trace.append((life, *event))

    def kill(self, life: int) -> None:
        """The kernel of ``life`` is gone: whatever it is blocked in, or does next, does nothing."""
        with self.lock:
            self.dead.add(life)
            self.trace.append((life, "died"))
            self.fired = None
            self.countdown = None
            self._frozen.set()


class GatedStore:
    """The real SQLite store, with a crash point before and after each delivery call and a record of it."""

    def __init__(self, store, gate: Gate, life: int) -> None:
        self._store = store
        self._gate = gate
        self._life = life

    def enqueue(self, draft):
        with self._gate.step:  # not a drawn crash point
            self._gate.alive(self._life)
            message = self._store.enqueue(draft)
            self._gate.record(self._life, "enqueue", message)
        return message

    def __getattr__(self, name):
        call = getattr(self._store, name)
        if name not in GATED_STORE_CALLS:
            return call

        def gated(*args, **kwargs):
            self._gate.point(self._life, f"before {name}")
            with self._gate.step:
                result = call(*args, **kwargs)
                self._gate.record(self._life, name, args, kwargs, result)
            self._gate.point(self._life, f"after {name}")
            return result

        return gated


class CrashWorld(World):
    """The world of test_delivery_properties with input as a terminal takes it: a paste waits in the
    input box until its Enter, and the backend's record of the last marked input says how far it got."""

    def __init__(self) -> None:
        super().__init__()
        self.owed: dict[str, str] = {}  # terminal -> pasted text still waiting for its Enter
        self.records: dict[str, InputMark] = {}
        self.stray_enters: list[str] = []  # terminals an Enter was pressed into with nothing owed

    def paste(self, terminal_id: str, text: str, mark: str | None) -> None:
        with self.lock:
            self.typed.append((terminal_id, text))
            self.owed[terminal_id] = text
            if mark is not None:
                self.records[terminal_id] = InputMark(mark=mark, submitted=False)

    def enter(self, terminal_id: str, mark: str | None = None) -> None:
        with self.lock:
            if self.owed.pop(terminal_id, None) is None:
                self.stray_enters.append(terminal_id)
            else:
                self.terminals[terminal_id]["screen"] = f"BUSY {len(self.typed)}"
            if mark is not None:
                self.records[terminal_id] = InputMark(mark=mark, submitted=True)
        self.emit(terminal_id)


class CrashBackend(ScriptedBackend):
    """The scripted backend with a crash point around each step of typing and of reading it back."""

    def __init__(self, world: CrashWorld, gate: Gate, life: int) -> None:
        super().__init__(world)
        self.gate = gate
        self.life = life

    def send_text(self, terminal_id, text, *, enter_count=1, submit_delay=0.0, mark=None):
        if not text:  # the Enter a pasted input owes, recorded submitted with its mark
            self.gate.point(self.life, "before the owed Enter")
            with self.gate.step:
                self.world.enter(terminal_id, mark)
                self.gate.record(self.life, "enter", terminal_id, mark)
            self.gate.point(self.life, "after the owed Enter")
            return
        self.gate.point(self.life, "before paste")
        with self.gate.step:
            self.world.paste(terminal_id, text, mark)
            self.gate.record(self.life, "paste", terminal_id, text, mark)
        self.gate.point(self.life, "between paste and Enter")
        with self.gate.step:
            self.world.enter(terminal_id, mark)
            self.gate.record(self.life, "enter", terminal_id, mark)
        self.gate.point(self.life, "after Enter")

    def input_mark(self, terminal_id):
        self.gate.point(self.life, "before input_mark")
        with self.world.lock:
            record = self.world.records.get(terminal_id)
        self.gate.point(self.life, "after input_mark")
        return record

    def send_keys(self, terminal_id, keys):
        self.gate.point(self.life, "before send_keys")
        for key in keys:
            if key == "Enter":
                with self.gate.step:
                    self.world.enter(terminal_id)
                    self.gate.record(self.life, "enter", terminal_id, None)
        self.gate.point(self.life, "after send_keys")


class CrashPlugin(ScriptedPlugin):
    """The scripted plugin, with this life's gated backend and a gated SQLite store named ``gated``."""

    def __init__(self, world: CrashWorld, gate: Gate, life: int) -> None:
        super().__init__(world)
        self.gate = gate
        self.life = life

    @hookimpl
    def cao_register_backends(self):
        def backend(ctx):
            return CrashBackend(self.world, self.gate, self.life)

        return [BackendSpec(name="scripted", factory=backend)]

    @hookimpl
    def cao_register_inbox_stores(self):
        def gated(ctx):
            from cao_inbox_sqlite.store import open_store

            return GatedStore(open_store(ctx), self.gate, self.life)

        return [InboxStoreSpec(name="gated", factory=gated, description="SQLite with crash points")]


# -- the reference model ------------------------------------------------------------------------------

class Violation(AssertionError):
    """The kernel did something the contract forbids."""


@attrs.define
class Expected:
    """What the contract says one message is now."""

    id: int
    sender: str
    receiver: str
    body: str
    state: MessageState = MessageState.PENDING
    attempts: int = 0
    owner: int | None = None  # the kernel life that claimed it, while delivering
    typed: int = 0
    submitted: bool = False


class Contract:
    """The delivery contract in plain Python, replayed over what the kernels did at the contract."""

    def __init__(self) -> None:
        self.messages: dict[int, Expected] = {}
        self.owed: dict[str, list[int]] = {}  # terminal -> messages pasted, their Enter still owed
        self.live: int | None = None  # the kernel life that is running (None between a death and a boot)

    def apply(self, event: tuple) -> None:
        life, call, *rest = event
        getattr(self, "_" + call)(life, *rest)

    def booted(self, life: int) -> None:
        """A kernel finished starting: what an earlier kernel left ``delivering`` is settled by now."""
        self.live = life
        for m in self.messages.values():
            if m.state == MessageState.DELIVERING and m.owner != life:
                raise Violation(f"message {m.id} left delivering by kernel {m.owner} after kernel {life} "
                                "started")

    # -- store calls (InboxStore docstrings) --------------------------------------------------------

    def _enqueue(self, life, message):
        self.messages.setdefault(message.id, Expected(
            id=message.id, sender=message.sender_id, receiver=message.receiver_id, body=message.body))

    def _claim_next(self, life, args, kwargs, result):
        if result is None:
            return
        # The oldest due: an older one waiting may only be a retry (attempts counted, not due yet).
        older = [m.id for m in self.messages.values() if m.receiver == result.receiver_id
                 and m.state == MessageState.PENDING and m.id < result.id and not m.attempts]
        if older:
            raise Violation(f"claim_next took message {result.id} before the older {older}")
        self._claimed(life, result.id, "claim_next")

    def _claim(self, life, args, kwargs, result):
        (message_id,) = args
        if result is None:
            if self.messages[message_id].state == MessageState.PENDING:
                raise Violation(f"claim({message_id}) found a pending message not pending")
        else:
            self._claimed(life, message_id, "claim")

    def _claimed(self, life: int, message_id: int, call: str) -> None:
        m = self.messages[message_id]
        if m.state != MessageState.PENDING:
            raise Violation(f"{call} took message {m.id} in state {m.state.value}")
        unsettled = [o.id for o in self.messages.values() if o.receiver == m.receiver
                     and o.state == MessageState.DELIVERING and o.owner != life]
        if unsettled:
            owner = self.messages[unsettled[0]].owner
            raise Violation(f"kernel {life} claimed message {m.id} while kernel {owner}'s delivery of "
                            f"{unsettled} to the same receiver was not settled")
        m.state, m.owner = MessageState.DELIVERING, life

    def _mark_delivered(self, life, args, kwargs, result):
        m = self._delivering(life, args[0], "mark_delivered")
        if m.typed != 1 or not m.submitted:
            raise Violation(f"message {m.id} recorded delivered, typed {m.typed} times, "
                            f"submitted: {m.submitted}")
        m.state, m.owner = MessageState.DELIVERED, None

    def _mark_failed(self, life, args, kwargs, result):
        m = self._delivering(life, args[0], "mark_failed")
        if m.typed:
            raise Violation(f"message {m.id} marked failed ({args[1]}) after it was typed")
        m.attempts += 1
        m.state = MessageState.DEAD if kwargs.get("retry_at") is None else MessageState.PENDING
        m.owner = None

    def _release(self, life, args, kwargs, result):
        m = self._delivering(life, args[0], "release")
        if m.typed:
            raise Violation(f"message {m.id} put back as never started after it was typed")
        m.state, m.owner = MessageState.PENDING, None

    def _delivering(self, life: int, message_id: int, call: str) -> Expected:
        m = self.messages[message_id]
        if m.state != MessageState.DELIVERING:
            raise Violation(f"{call}({message_id}) by kernel {life} on a message in state {m.state.value}")
        return m

    def _list(self, life, args, kwargs, result):
        pass

    def _receivers_with_pending(self, life, args, kwargs, result):
        pass

    # -- backend calls (TerminalBackend docstrings) ---------------------------------------------------

    def _paste(self, life, terminal_id, text, mark):
        found = [m for m in self.messages.values() if m.body in text]
        # A notice to a sender quotes the start of its message: that message is not in this input.
        batch = sorted((m for m in found if not any(o is not m and m.body in o.body for o in found)),
                       key=lambda m: m.id)
        if not batch:
            raise Violation(f"kernel {life} typed something that is no message: {text!r}")
        if mark != str(batch[0].id):
            raise Violation(f"input of messages {[m.id for m in batch]} marked {mark!r}")
        for m in batch:
            if m.typed:
                raise Violation(f"message {m.id} typed twice")
            if m.receiver != terminal_id:
                raise Violation(f"message {m.id} for {m.receiver} typed into {terminal_id}")
            if m.state != MessageState.DELIVERING or m.owner != life:
                raise Violation(f"kernel {life} typed message {m.id} it had not claimed "
                                f"(state {m.state.value}, owner {m.owner})")
            later = [o.id for o in self.messages.values() if o.sender == m.sender and o.receiver == m.receiver
                     and o.id > m.id and o.typed]
            if later:
                raise Violation(f"message {m.id} typed after {later}, sent later by the same sender")
            m.typed = 1
        self.owed[terminal_id] = [m.id for m in batch]

    def _enter(self, life, terminal_id, mark):
        owed = self.owed.pop(terminal_id, None)
        if owed is None:
            raise Violation(f"kernel {life} pressed Enter in {terminal_id} where no input was owed one")
        for message_id in owed:
            self.messages[message_id].submitted = True

    def _died(self, life):
        if self.live == life:
            self.live = None

    # -- comparing with what is real ------------------------------------------------------------------

    def check(self, stored: dict[int, object]) -> None:
        """The store holds exactly what the model says; ``delivering`` only under the live kernel."""
        lost, unknown = sorted(set(self.messages) - set(stored)), sorted(set(stored) - set(self.messages))
        assert not lost and not unknown, f"lost: {lost}, unknown: {unknown}"
        for m in self.messages.values():
            real = stored[m.id]
            assert (real.state, real.attempts) == (m.state, m.attempts), (
                f"message {m.id} is {real.state.value} after {real.attempts} attempts in the store, "
                f"{m.state.value} after {m.attempts} in the model")
            if m.state == MessageState.DELIVERING:
                assert m.owner == self.live, f"message {m.id} delivering for kernel {m.owner}, which is dead"


# -- the machine --------------------------------------------------------------------------------------

@settings(max_examples=100, stateful_step_count=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
class CrashPointMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.home = tempfile.mkdtemp(prefix="cao-crash-")
        self.world = CrashWorld()
        self.gate = Gate()
        self.model = Contract()
        self.loop = asyncio.new_event_loop()
        self.life = 0
        self.seen = 0  # trace events the model has replayed
        self.kernel = None
        self.then_crash: int | None = None  # crash the next kernel too, at this point of its start
        self.sent: list[int] = []  # ids send_message returned
        self.broken = False
        self._boot()
        self.ids: list[str] = []
        for _ in range(N_TERMINALS):
            term = self._run(self.kernel.create_session(CreateTerminalRequest(
                agent_profile="worker", working_directory=self.home)))
            self.ids.append(term.id)

    # -- kernel lives -------------------------------------------------------------------------------

    def _boot(self) -> None:
        """Start kernels on the same file and world until one finishes starting without being killed."""
        while True:
            self.life += 1
            self.kernel = Kernel(
                plugins=[CrashPlugin(self.world, self.gate, self.life)], load_entrypoints=False,
                home=self.home,
                settings={"CAO_TERMINAL_BACKEND": "scripted", "CAO_INBOX_STORE": "gated",
                          "CAO_INBOX_RETRY_BASE": "0.001", "CAO_INPUT_SETTLE": "0.05",
                          "CAO_INBOX_MAX_ATTEMPTS": "3",
                          # One I/O thread: a kernel frozen at a crash point does nothing else.
                          "CAO_IO_THREADS": "1"},
            )
            self.kernel.add_profile(AgentProfile(name="worker", provider="scripted"))
            if self.then_crash is not None:
                self.gate.countdown, self.then_crash = self.then_crash, None
            start = self.loop.create_task(self.kernel.start())
            if self._drive(start):
                self._replay()
                self.model.booted(self.life)
                return
            self._abandon(start)

    def _abandon(self, start: asyncio.Task | None = None) -> None:
        """The kernel process dies: its tasks stop where they are and nothing is cleaned up."""
        old = self.kernel
        if start is not None:
            start.cancel()
            self._run(asyncio.gather(start, return_exceptions=True))
        if old.delivery is not None:
            self._run(old.delivery.aclose())
        if old.terminals is not None:
            for live in filter(None, map(old.terminals.get, getattr(self, "ids", ()))):
                live.tracker.detach()
                if live.refresh_task is not None:
                    live.refresh_task.cancel()
        self.gate.kill(self.life)
        old.io.close(wait=True)
        if old.delivery is not None:
            old.delivery.store._store.close()
        self.world.watchers.clear()
        self._replay()

    def _restart_if_dead(self) -> None:
        if self.gate.fired is not None:
            self._abandon()
            self._boot()

    def _run(self, coro):
        return self.loop.run_until_complete(coro)

    def _drive(self, task: asyncio.Future, limit: float = 5.0) -> bool:
        """Run the loop until ``task`` is done (True) or the kernel froze at a crash point (False)."""
        waited = 0.0
        while not task.done():
            if self.gate.fired is not None:
                return False
            self._run(asyncio.wait({task}, timeout=0.002))
            waited += 0.002
            assert waited < limit, "the kernel hung without crashing"
        task.result()
        return True

    def _settle(self, seconds: float = 0.01) -> None:
        sleep = self.loop.create_task(asyncio.sleep(seconds))
        if not self._drive(sleep):
            sleep.cancel()
            self._run(asyncio.gather(sleep, return_exceptions=True))

    def _replay(self) -> None:
        with self.gate.lock:
            events, self.seen = self.gate.trace[self.seen:], len(self.gate.trace)
        for event in events:
            try:
                self.model.apply(event)
            except Violation:
                self.broken = True  # the model cannot follow any further: teardown checks nothing more
                raise

    def _stored(self):
        store = self.kernel.delivery.store._store
        return {m.id: m for m in store.list(None, limit=100_000)}

    # -- rules --------------------------------------------------------------------------------------

    @rule(sender_index=st.integers(0, N_TERMINALS - 1), offset=st.integers(1, N_TERMINALS - 1))
    def send(self, sender_index, offset):
        sender = self.ids[sender_index]
        receiver = self.ids[(sender_index + offset) % N_TERMINALS]
        token = len(self.sent)
        task = self.loop.create_task(self.kernel.send_message(sender, receiver, f"<<m{token}>>"))
        if self._drive(task):
            self.sent.append(task.result().id)
        self._settle(0.002)
        self._restart_if_dead()

    def _ready(self, tid: str) -> None:
        with self.world.lock:
            self.world.terminals[tid]["screen"] = "READY " + self.world.terminals[tid]["screen"][5:]
        self.world.emit(tid)

    @rule(index=st.integers(0, N_TERMINALS - 1))
    def finish_turn(self, index):
        self._ready(self.ids[index])
        self._settle()
        self._restart_if_dead()

    @rule(index=st.integers(0, N_TERMINALS - 1))
    def fail_next_delivery(self, index):
        self.world.fail_next[self.ids[index]] += 1

    @rule(k=st.integers(0, 15), then=st.none() | st.integers(0, 8))
    def die_at_step(self, k, then):
        """The kernel dies at the k-th crash point from now (in this step or a later one); with ``then``,
        the next kernel dies at that point of its own start, while settling what this one left."""
        # Draws never depend on timing-dependent state (hypothesis replays them): a count, not a choice.
        self.gate.countdown = k
        self.then_crash = then
        self._settle(0.002)
        self._restart_if_dead()

    @rule()
    def graceful_restart(self):
        if self._drive(self.loop.create_task(self.kernel.aclose())):
            self._replay()
            self.model.live = None
            self.gate.countdown = self.then_crash = None
            self.gate.kill(self.life)  # its I/O thread may still finish a call after aclose: not recorded
            self._boot()
        else:
            self._abandon()
            self._boot()

    @rule()
    def time_passes(self):
        self._settle(0.02)
        self._restart_if_dead()

    # -- invariants ---------------------------------------------------------------------------------

    @invariant()
    def store_matches_the_model(self):
        with self.gate.step:
            self._replay()
            self.model.check(self._stored())
        assert not self.world.stray_enters, f"an Enter pressed with nothing owed in {self.world.stray_enters}"

    def teardown(self):
        try:
            if self.broken:
                return
            self.gate.countdown = None
            self.world.fail_next.clear()
            # Let every terminal finish, again and again, until all mail has settled.
            settled = (MessageState.DELIVERED, MessageState.DEAD)
            for _ in range(400):
                for tid in self.ids:
                    self._ready(tid)
                self._settle(0.005)
                self._replay()
                if all(m.state in settled for m in self.model.messages.values()):
                    break
            self.store_matches_the_model()
            for message_id in self.sent:
                assert message_id in self.model.messages, f"message {message_id} was lost"
            for m in self.model.messages.values():
                assert m.state in settled, f"message {m.id} ended {m.state.value}"
                if m.state == MessageState.DEAD:
                    assert m.typed == 0, f"message {m.id} went in and was reported undeliverable"
                else:
                    assert m.typed == 1 and m.submitted
            self.senders_told()
        finally:
            try:
                self._run(self.kernel.aclose())
            finally:
                self.loop.close()

    def senders_told(self) -> None:
        """Every sender of a dead message was told, whichever kernel recorded it dead."""
        notices = [m.body for m in self.model.messages.values() if m.sender == SYSTEM_SENDER]
        for m in self.model.messages.values():
            if m.state == MessageState.DEAD and m.sender != SYSTEM_SENDER:
                assert any(f"Your message {m.id} " in body for body in notices), (
                    f"message {m.id} is dead and its sender was never told")


TestCrashPoints = CrashPointMachine.TestCase


def test_an_owed_enter_is_pressed_once():
    """A kernel dies between a paste and its Enter; the next one presses the Enter the input owes and
    dies before recording the message delivered; the third must not press that Enter again (the
    receiver is working on the message by then: a second Enter goes into whatever it shows)."""
    machine = CrashPointMachine()
    try:
        machine.time_passes()  # the terminals' first ready status has been seen: the inboxes are empty
        # The delivery's crash points: before and after claim_next (0, 1) and list (2, 3), before the
        # paste (4), between the paste and its Enter (5). The next kernel's start: before and after
        # list (0, 1) and input_mark (2, 3), before and after the owed Enter (4, 5).
        machine.die_at_step(k=5, then=5)
        machine.send(sender_index=0, offset=1)
        assert machine.life == 3
        machine.store_matches_the_model()
    finally:
        machine.teardown()



def test_a_dead_letter_is_reported_across_a_crash():
    """A message fails its last attempt and is recorded dead; the kernel dies before queueing the
    notice to its sender. The next kernel must still tell the sender."""
    machine = CrashPointMachine()
    try:
        machine.time_passes()
        for _ in range(3):
            machine.fail_next_delivery(index=1)
        machine.gate.at = ["after mark_failed", 3]  # the third attempt's failure, recorded dead
        machine.send(sender_index=0, offset=1)
        for _ in range(5):
            machine.time_passes()
        assert machine.life == 2
    finally:
        machine.teardown()
    machine.senders_told()
