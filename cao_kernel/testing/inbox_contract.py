"""The behaviour every ``InboxStore`` owes the kernel, as a reusable pytest suite.

Subclass ``InboxStoreContract`` in a test module (its name must start with ``Test``) and override the
``make_store`` fixture with a callable that opens the store at a given place::

    from cao_kernel.testing.inbox_contract import InboxStoreContract

    class TestRedisInboxContract(InboxStoreContract):
        @pytest.fixture
        def make_store(self):
            return lambda place: RedisInbox(namespace=str(place))

``place`` is a folder (it may not exist yet) that stands for one inbox. Opening the store again at the
same place after ``close()`` is a restart: everything stored before must be there, in the same state.

What the suite pins, beyond the Protocol's docstrings:

- ids are integers, increasing in enqueue order, never reused after a restart;
- "oldest" means lowest id, so a message retried and due again goes before younger ones;
- ``claim`` ignores ``not_before`` (it names its message); ``claim_next`` honours it;
- ``mark_delivered``, ``mark_failed``, ``mark_uncertain`` and ``release`` need a ``delivering``
  message: any other state raises ``ValueError`` naming the id and the state, an unknown id raises
  ``LookupError``, and either way nothing changes;
- ``receivers_with_pending`` lists the receiver whose oldest pending message is oldest first;
- bodies are limited to 1 MiB of UTF-8 (``ValueError`` beyond, nothing stored); an empty receiver or
  text that is not valid Unicode is refused the same way;
- after ``close()`` every method raises ``RuntimeError``; closing twice is fine.

The module imports pytest and hypothesis, so only test code should import it.
"""

from __future__ import annotations

import itertools
import math
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from cao_hookspecs import InboxStore, Message, MessageDraft, MessageState, OrchestrationType

__all__ = ["MAX_BODY_BYTES", "InboxStoreContract", "OpenStore"]

MAX_BODY_BYTES = 1024 * 1024
THREADS = 8

OpenStore = Callable[..., InboxStore]

PENDING = MessageState.PENDING
DELIVERING = MessageState.DELIVERING
DELIVERED = MessageState.DELIVERED
DEAD = MessageState.DEAD
UNCERTAIN = MessageState.UNCERTAIN


def draft(
    receiver: str = "r1", body: str = "hello", *, sender: str = "s1", key: str | None = None, **kw: Any
) -> MessageDraft:
    """A message draft with test defaults."""
    return MessageDraft(sender_id=sender, receiver_id=receiver, body=body, idempotency_key=key, **kw)


def _race(worker: Callable[[int], Any], threads: int = THREADS) -> list[Any]:
    """Run ``worker(i)`` on ``threads`` threads released together; re-raises the first failure."""
    barrier = threading.Barrier(threads)

    def run(i: int) -> Any:
        barrier.wait(timeout=30)
        return worker(i)

    # Switch threads far more often than the default 5 ms so a missing lock in pure-Python code shows.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(threads) as pool:
            futures = [pool.submit(run, i) for i in range(threads)]
            return [f.result(timeout=120) for f in futures]
    finally:
        sys.setswitchinterval(interval)


class InboxStoreContract:
    """Contract tests for one ``InboxStore`` implementation; subclasses provide ``make_store``."""

    #: Hypothesis settings of the stateful test; a slow store may lower ``max_examples``.
    stateful_settings: ClassVar[settings] = settings(
        max_examples=75, stateful_step_count=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )

    # -- fixtures ---------------------------------------------------------------------------------

    @pytest.fixture
    def make_store(self) -> Callable[[Path], InboxStore]:
        """Override: return ``open(place) -> InboxStore``; a second open at the same place is a restart."""
        raise NotImplementedError(f"{type(self).__name__} must override the make_store fixture")

    @pytest.fixture
    def open_store(self, make_store: Callable[[Path], InboxStore], tmp_path: Path) -> Iterator[OpenStore]:
        """``open_store(place=None)``: open (or reopen) a store, closed again after the test."""
        opened: list[InboxStore] = []

        def open_(place: Path | None = None) -> InboxStore:
            store = make_store(tmp_path / "inbox" if place is None else place)
            opened.append(store)
            return store

        yield open_
        for store in opened:
            store.close()

    @pytest.fixture
    def store(self, open_store: OpenStore) -> InboxStore:
        return open_store()

    @pytest.fixture
    def restart(self, open_store: OpenStore) -> Callable[[InboxStore], InboxStore]:
        """``restart(store)``: close it and open a new one at the default place."""

        def restart_(store: InboxStore) -> InboxStore:
            store.close()
            return open_store()

        return restart_

    # -- enqueue, get, list -----------------------------------------------------------------------

    def test_satisfies_the_protocol(self, store: InboxStore) -> None:
        assert isinstance(store, InboxStore)

    def test_enqueue_stores_a_pending_message(self, store: InboxStore) -> None:
        before = time.time()
        message = store.enqueue(
            draft("r1", "do the thing", sender="s9", orchestration_type=OrchestrationType.ASSIGN)
        )
        assert isinstance(message, Message)
        assert isinstance(message.id, int)
        assert (message.sender_id, message.receiver_id, message.body) == ("s9", "r1", "do the thing")
        assert message.state is PENDING
        assert message.orchestration_type is OrchestrationType.ASSIGN
        assert (message.attempts, message.last_error, message.not_before) == (0, None, None)
        assert before <= message.created_at <= time.time()
        assert store.get(message.id) == message

    def test_get_unknown_id_is_none(self, store: InboxStore) -> None:
        assert store.get(1) is None
        known = store.enqueue(draft())
        assert store.get(known.id + 1000) is None

    def test_ids_increase_in_enqueue_order(self, store: InboxStore) -> None:
        ids = [store.enqueue(draft(f"r{i % 3}", f"m{i}")).id for i in range(20)]
        assert ids == sorted(ids)
        assert len(set(ids)) == 20

    def test_list_is_oldest_first_and_filters(self, store: InboxStore) -> None:
        a1 = store.enqueue(draft("a", "1"))
        b1 = store.enqueue(draft("b", "2"))
        a2 = store.enqueue(draft("a", "3"))
        a3 = store.enqueue(draft("a", "4"))
        store.claim(a2.id)
        assert [m.id for m in store.list()] == [a1.id, b1.id, a2.id, a3.id]
        assert [m.id for m in store.list("a")] == [a1.id, a2.id, a3.id]
        assert [m.id for m in store.list("a", state=PENDING)] == [a1.id, a3.id]
        assert [m.id for m in store.list(state=DELIVERING)] == [a2.id]
        assert [m.id for m in store.list(state="pending")] == [a1.id, b1.id, a3.id]
        assert [m.id for m in store.list("a", limit=2)] == [a1.id, a2.id]
        assert store.list(limit=0) == []
        assert store.list("nobody") == []
        assert store.list(state=DEAD) == []

    def test_list_default_limit_is_100(self, store: InboxStore) -> None:
        for i in range(105):
            store.enqueue(draft(body=str(i)))
        assert [m.body for m in store.list()] == [str(i) for i in range(100)]

    @pytest.mark.parametrize("kwargs", [{"state": "lost"}, {"limit": -1}, {"limit": 1.5}])
    def test_list_rejects_bad_filters(self, store: InboxStore, kwargs: dict[str, Any]) -> None:
        with pytest.raises(ValueError):
            store.list(**kwargs)

    def test_body_round_trips_any_text(self, store: InboxStore) -> None:
        @settings(max_examples=60, deadline=None)
        @given(
            body=st.text(max_size=300),
            sender=st.text(max_size=20),
            receiver=st.text(min_size=1, max_size=20),
            key=st.none() | st.text(max_size=20),
        )
        def check(body: str, sender: str, receiver: str, key: str | None) -> None:
            # Keys are made unique per example: this checks the text round trip, not idempotency.
            unique_key = None if key is None else f"{next(counter)}:{key}"
            message = store.enqueue(draft(receiver, body, sender=sender, key=unique_key))
            stored = store.get(message.id)
            assert stored == message
            assert (stored.body, stored.sender_id, stored.receiver_id) == (body, sender, receiver)
            assert stored.idempotency_key == unique_key

        counter = itertools.count()
        check()

    # -- idempotency ------------------------------------------------------------------------------

    def test_same_idempotency_key_returns_the_stored_message(self, store: InboxStore) -> None:
        first = store.enqueue(draft("r1", "original", key="k-1"))
        again = store.enqueue(draft("r2", "a different body", key="k-1"))
        assert again == first
        assert store.list() == [first]
        other = store.enqueue(draft("r1", "original", key="k-2"))
        assert other.id != first.id
        assert len(store.list()) == 2

    def test_idempotency_key_holds_whatever_the_state(self, store: InboxStore, restart: Any) -> None:
        first = store.enqueue(draft(key="k"))
        store.claim(first.id)
        delivered = store.mark_delivered(first.id)
        assert store.enqueue(draft(key="k")) == delivered
        store = restart(store)
        assert store.enqueue(draft(key="k")) == delivered
        assert len(store.list()) == 1

    def test_messages_without_key_are_never_merged(self, store: InboxStore) -> None:
        one = store.enqueue(draft(body="same"))
        two = store.enqueue(draft(body="same"))
        assert one.id != two.id

    def test_racing_enqueues_of_one_key_store_one_message(self, store: InboxStore) -> None:
        for round_ in range(10):
            key = f"shared-{round_}"
            results = _race(lambda i: store.enqueue(draft(body=f"from thread {i}", key=key)))  # noqa: B023
            stored = {m.id for m in results}
            assert len(stored) == 1, f"one key stored {len(stored)} messages"
            assert store.list()[-1] == results[0]
        assert len(store.list()) == 10

    # -- claiming ---------------------------------------------------------------------------------

    def test_claim_next_takes_the_oldest_of_that_receiver(self, store: InboxStore) -> None:
        a1 = store.enqueue(draft("a", "1"))
        b1 = store.enqueue(draft("b", "2"))
        a2 = store.enqueue(draft("a", "3"))
        got = store.claim_next("a")
        assert got is not None
        assert got.id == a1.id
        assert got.state is DELIVERING
        assert store.get(a1.id) == got
        assert store.get(b1.id).state is PENDING
        assert store.claim_next("a").id == a2.id
        assert store.claim_next("a") is None
        assert store.claim_next("nobody") is None
        assert store.claim_next("b").id == b1.id

    def test_claim_next_skips_messages_not_due(self, store: InboxStore) -> None:
        held = store.enqueue(draft(body="held"))
        later = store.enqueue(draft(body="later"))
        store.claim(held.id)
        retry_at = time.time() + 3600
        store.mark_failed(held.id, "busy", retry_at=retry_at)
        assert store.claim_next("r1").id == later.id  # the held one is not due yet
        assert store.claim_next("r1") is None
        assert store.claim_next("r1", now=retry_at - 1) is None
        got = store.claim_next("r1", now=retry_at)
        assert got is not None
        assert got.id == held.id

    def test_due_retry_goes_before_younger_messages(self, store: InboxStore) -> None:
        old = store.enqueue(draft(body="old"))
        young = store.enqueue(draft(body="young"))
        store.claim_next("r1")
        store.mark_failed(old.id, "busy", retry_at=1000.0)
        assert store.claim_next("r1", now=1000.0).id == old.id
        assert store.claim_next("r1", now=1000.0).id == young.id

    def test_claim_by_id(self, store: InboxStore) -> None:
        first = store.enqueue(draft())
        second = store.enqueue(draft())
        got = store.claim(second.id)
        assert got is not None
        assert (got.id, got.state) == (second.id, DELIVERING)
        assert store.claim(second.id) is None  # already delivering
        assert store.get(first.id).state is PENDING
        assert store.claim(second.id + 1000) is None  # unknown

    def test_claim_by_id_ignores_not_before(self, store: InboxStore) -> None:
        message = store.enqueue(draft())
        store.claim(message.id)
        store.mark_failed(message.id, "busy", retry_at=time.time() + 3600)
        assert store.claim_next("r1") is None
        got = store.claim(message.id)
        assert got is not None
        assert got.state is DELIVERING

    @pytest.mark.parametrize("state", [DELIVERED, DEAD])
    def test_finished_messages_cannot_be_claimed(self, store: InboxStore, state: MessageState) -> None:
        message = store.enqueue(draft())
        store.claim(message.id)
        if state is DELIVERED:
            store.mark_delivered(message.id)
        else:
            store.mark_failed(message.id, "gone", retry_at=None)
        assert store.claim(message.id) is None
        assert store.claim_next("r1", now=math.inf) is None
        assert store.get(message.id).state is state

    def test_claim_next_is_exclusive_under_racing_threads(self, store: InboxStore) -> None:
        ids = [store.enqueue(draft(body=f"m{i}")).id for i in range(96)]

        def drain(_: int) -> list[int]:
            got = []
            while (message := store.claim_next("r1")) is not None:
                assert message.state is DELIVERING
                got.append(message.id)
            return got

        per_thread = _race(drain)
        claimed = [i for got in per_thread for i in got]
        assert sorted(claimed) == ids, "a message was claimed twice or lost"
        for got in per_thread:
            assert got == sorted(got), "each claimer must see the oldest message first"
        assert all(m.state is DELIVERING for m in store.list(limit=1000))

    def test_claim_by_id_is_exclusive_under_racing_threads(self, store: InboxStore) -> None:
        for _ in range(10):
            message = store.enqueue(draft())
            winners = [m for m in _race(lambda _: store.claim(message.id)) if m is not None]
            assert len(winners) == 1
            assert winners[0].id == message.id

    def test_concurrent_senders_and_deliverers_lose_and_repeat_nothing(self, store: InboxStore) -> None:
        def work(i: int) -> tuple[list[int], list[int]]:
            sent, delivered = [], []
            for n in range(15):
                sent.append(store.enqueue(draft(f"r{i % 2}", f"{i}-{n}", sender=f"s{i}")).id)
                message = store.claim_next(f"r{(i + n) % 2}")
                if message is not None:
                    delivered.append(store.mark_delivered(message.id).id)
            return sent, delivered

        results = _race(work)
        sent = sorted(i for s, _ in results for i in s)
        delivered = [i for _, d in results for i in d]
        for receiver in ("r0", "r1"):
            while (message := store.claim_next(receiver)) is not None:
                delivered.append(store.mark_delivered(message.id).id)
        assert len(set(sent)) == len(sent) == THREADS * 15
        assert sorted(delivered) == sent
        assert store.receivers_with_pending() == []

    # -- the state machine ------------------------------------------------------------------------

    def test_mark_delivered(self, store: InboxStore) -> None:
        message = store.enqueue(draft())
        store.claim(message.id)
        done = store.mark_delivered(message.id)
        assert (done.id, done.state, done.attempts) == (message.id, DELIVERED, 0)
        assert done.created_at == message.created_at
        assert store.get(message.id) == done

    def test_mark_failed_with_retry_counts_the_attempt(self, store: InboxStore) -> None:
        message = store.enqueue(draft())
        store.claim(message.id)
        failed = store.mark_failed(message.id, "paste refused", retry_at=500.0)
        assert (failed.state, failed.attempts, failed.last_error, failed.not_before) == (
            PENDING,
            1,
            "paste refused",
            500.0,
        )
        assert store.get(message.id) == failed
        store.claim_next("r1", now=500.0)
        again = store.mark_failed(message.id, "still refused", retry_at=900.0)
        assert (again.attempts, again.last_error, again.not_before) == (2, "still refused", 900.0)

    def test_mark_failed_without_retry_dead_letters(self, store: InboxStore) -> None:
        message = store.enqueue(draft())
        store.claim(message.id)
        dead = store.mark_failed(message.id, "receiver gone", retry_at=None)
        assert (dead.state, dead.attempts, dead.last_error) == (DEAD, 1, "receiver gone")
        assert store.list(state=DEAD) == [dead]
        assert store.receivers_with_pending() == []
        assert store.claim_next("r1", now=math.inf) is None

    def test_release_returns_to_pending_without_an_attempt(self, store: InboxStore) -> None:
        first = store.enqueue(draft(body="first"))
        store.enqueue(draft(body="second"))
        store.claim_next("r1")
        released = store.release(first.id)
        assert (released.state, released.attempts, released.last_error) == (PENDING, 0, None)
        assert store.claim_next("r1").id == first.id  # still the oldest

    def test_mark_uncertain_keeps_the_reason_and_never_comes_back(self, store: InboxStore) -> None:
        message = store.enqueue(draft())
        store.claim(message.id)
        uncertain = store.mark_uncertain(message.id, "no record")
        assert (uncertain.state, uncertain.attempts, uncertain.last_error) == (UNCERTAIN, 0, "no record")
        assert store.get(message.id) == uncertain
        assert store.claim_next("r1", now=math.inf) is None and store.claim(message.id) is None

    @pytest.mark.parametrize("start", [PENDING, DELIVERED, DEAD])
    @pytest.mark.parametrize("action", ["mark_delivered", "retry", "dead_letter", "release", "uncertain"])
    def test_transitions_need_a_delivering_message(
        self, store: InboxStore, start: MessageState, action: str
    ) -> None:
        message = store.enqueue(draft())
        if start is not PENDING:
            store.claim(message.id)
            if start is DELIVERED:
                store.mark_delivered(message.id)
            else:
                store.mark_failed(message.id, "x", retry_at=None)
        before = store.get(message.id)
        with pytest.raises(ValueError) as err:
            _act(store, action, message.id)
        assert str(message.id) in str(err.value)
        assert start.value in str(err.value)
        assert store.get(message.id) == before

    @pytest.mark.parametrize("action", ["mark_delivered", "retry", "dead_letter", "release", "uncertain"])
    def test_transitions_of_unknown_ids_raise_lookup_error(self, store: InboxStore, action: str) -> None:
        with pytest.raises(LookupError, match="4242"):
            _act(store, action, 4242)

    @pytest.mark.parametrize("retry_at", [math.nan, math.inf])
    def test_mark_failed_rejects_a_time_that_is_not_finite(self, store: InboxStore, retry_at: float) -> None:
        message = store.enqueue(draft())
        claimed = store.claim(message.id)
        with pytest.raises(ValueError, match="retry_at"):
            store.mark_failed(message.id, "x", retry_at=retry_at)
        assert store.get(message.id) == claimed

    def test_receivers_with_pending(self, store: InboxStore) -> None:
        assert store.receivers_with_pending() == []
        b = store.enqueue(draft("b"))
        store.enqueue(draft("a"))
        store.enqueue(draft("b"))
        c = store.enqueue(draft("c"))
        assert store.receivers_with_pending() == ["b", "a", "c"]
        store.claim(c.id)
        assert store.receivers_with_pending() == ["b", "a"]
        store.claim(b.id)  # b still has its younger message
        assert store.receivers_with_pending() == ["a", "b"]
        store.mark_failed(c.id, "later", retry_at=10**10)  # pending again, even though not due
        assert store.receivers_with_pending() == ["a", "b", "c"]

    # -- bad input --------------------------------------------------------------------------------

    def test_body_limit_is_one_mebibyte_of_utf8(self, store: InboxStore) -> None:
        exact = store.enqueue(draft(body="x" * MAX_BODY_BYTES))
        assert store.get(exact.id).body == "x" * MAX_BODY_BYTES
        wide = store.enqueue(draft(body="é" * (MAX_BODY_BYTES // 2)))  # two bytes each
        assert len(store.get(wide.id).body) == MAX_BODY_BYTES // 2
        for body in ("x" * (MAX_BODY_BYTES + 1), "é" * (MAX_BODY_BYTES // 2) + "x"):
            with pytest.raises(ValueError, match="1 MiB"):
                store.enqueue(draft(body=body, key="too-big"))
        assert [m.id for m in store.list()] == [exact.id, wide.id]
        assert store.enqueue(draft(body="fits", key="too-big")).body == "fits"  # the key was not taken

    @pytest.mark.parametrize(
        ("bad", "error"),
        [
            (draft(receiver=""), ValueError),
            (draft(body="\ud800 lone surrogate"), ValueError),
            (draft(sender="\udfff"), ValueError),
            (draft(key="\ud800"), ValueError),
            (draft(body=b"bytes"), TypeError),  # type: ignore[arg-type]
            (draft(receiver=None), TypeError),  # type: ignore[arg-type]
            ("not a draft", TypeError),
        ],
    )
    def test_bad_drafts_are_refused_and_store_nothing(
        self, store: InboxStore, bad: Any, error: type[Exception]
    ) -> None:
        with pytest.raises(error):
            store.enqueue(bad)
        assert store.list() == []
        assert store.receivers_with_pending() == []

    # -- restart and close ------------------------------------------------------------------------

    def test_everything_survives_a_restart(self, store: InboxStore, restart: Any) -> None:
        pending = store.enqueue(draft("a", "pending", key="k1"))
        retried = store.enqueue(draft("a", "retried"))
        delivering = store.enqueue(draft("b", "delivering", orchestration_type="handoff"))
        delivered = store.enqueue(draft("b", "delivered"))
        dead = store.enqueue(draft("c", "dead"))
        for message in (retried, delivering, delivered, dead):
            store.claim(message.id)
        store.mark_failed(retried.id, "busy", retry_at=123.5)
        store.mark_delivered(delivered.id)
        store.mark_failed(dead.id, "gone", retry_at=None)
        before = store.list()
        assert [m.state for m in before] == [PENDING, PENDING, DELIVERING, DELIVERED, DEAD]

        store = restart(store)
        assert store.list() == before
        assert store.get(pending.id) == before[0]
        assert store.receivers_with_pending() == ["a"]
        assert store.enqueue(draft(key="k1")) == before[0]
        newer = store.enqueue(draft("a", "after restart"))
        assert newer.id > dead.id
        assert store.claim_next("a", now=123.5).id == pending.id
        assert store.claim_next("a", now=123.5).id == retried.id
        assert store.mark_delivered(delivering.id).state is DELIVERED  # a claim survives a restart

    def test_closed_store_refuses_calls(self, store: InboxStore) -> None:
        message = store.enqueue(draft())
        store.close()
        store.close()  # twice is fine
        calls: list[Callable[[], Any]] = [
            lambda: store.enqueue(draft()),
            lambda: store.claim_next("r1"),
            lambda: store.claim(message.id),
            lambda: store.mark_delivered(message.id),
            lambda: store.get(message.id),
            lambda: store.list(),
            lambda: store.receivers_with_pending(),
        ]
        for call in calls:
            with pytest.raises(RuntimeError, match="closed"):
                call()

    def test_any_interleaving_keeps_the_model(
        self, make_store: Callable[[Path], InboxStore], tmp_path: Path
    ) -> None:
        machine = _machine(make_store, lambda: Path(tempfile.mkdtemp(dir=tmp_path)))
        run_state_machine_as_test(machine, settings=self.stateful_settings)


def _act(store: InboxStore, action: str, message_id: int) -> Message:
    if action == "mark_delivered":
        return store.mark_delivered(message_id)
    if action == "retry":
        return store.mark_failed(message_id, "retry", retry_at=1.0)
    if action == "dead_letter":
        return store.mark_failed(message_id, "dead", retry_at=None)
    if action == "uncertain":
        return store.mark_uncertain(message_id, "unknown")
    return store.release(message_id)


# -- stateful model ---------------------------------------------------------------------------------

SENDERS = ("s1", "s2")
RECEIVERS = ("r1", "r2", "r3")
KEYS = ("k1", "k2", "k3")


@attrs.define
class _Expected:
    """What the model believes about one message."""

    sender: str
    receiver: str
    body: str
    key: str | None
    created_at: float
    state: MessageState = PENDING
    attempts: int = 0
    last_error: str | None = None
    not_before: float | None = None

    def check(self, message: Message) -> None:
        got = (
            message.sender_id, message.receiver_id, message.body, message.idempotency_key, message.created_at,
            message.state, message.attempts, message.last_error, message.not_before,
        )  # fmt: skip
        want = (
            self.sender, self.receiver, self.body, self.key, self.created_at,
            self.state, self.attempts, self.last_error, self.not_before,
        )  # fmt: skip
        assert got == want, f"message {message.id}: store has {got}, model expects {want}"


def _has(*states: MessageState) -> Callable[[Any], bool]:
    """A precondition: the model holds a message in one of ``states``."""
    return lambda machine: bool(machine.ids_in(*states))


def _machine(make_store: Callable[[Path], InboxStore], new_place: Callable[[], Path]) -> type:
    """A state machine driving one store against a dict model.

    The model predicts every answer exactly: which message ``claim_next`` returns (the oldest due
    pending one of that receiver, hence per (sender, receiver) claims follow enqueue order among due
    messages), that a delivering message is never claimed again, which transitions fail, and that a
    reopen loses and changes nothing. After every step the whole store is compared with the model, so
    every message is in exactly one state.
    """

    class InboxModel(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.place = new_place()
            self.store = make_store(self.place)
            self.model: dict[int, _Expected] = {}
            self.by_key: dict[str, int] = {}
            self.now = 1_000_000.0  # a virtual clock: claim_next always gets an explicit ``now``
            self.failures = 0

        def ids_in(self, *states: MessageState) -> list[int]:
            return sorted(i for i, m in self.model.items() if m.state in states)

        @rule(
            sender=st.sampled_from(SENDERS),
            receiver=st.sampled_from(RECEIVERS),
            body=st.text(max_size=12),
            key=st.none() | st.sampled_from(KEYS),
        )
        def enqueue(self, sender: str, receiver: str, body: str, key: str | None) -> None:
            message = self.store.enqueue(draft(receiver, body, sender=sender, key=key))
            if key is not None and key in self.by_key:
                assert message.id == self.by_key[key], "a repeated key stored a second message"
                self.model[message.id].check(message)
                return
            assert message.id > max(self.model, default=0), "ids must increase"
            self.model[message.id] = _Expected(sender, receiver, body, key, message.created_at)
            self.model[message.id].check(message)
            if key is not None:
                self.by_key[key] = message.id

        @rule(receiver=st.sampled_from(RECEIVERS))
        def claim_next(self, receiver: str) -> None:
            due = [
                i
                for i in self.ids_in(PENDING)
                if self.model[i].receiver == receiver
                and (self.model[i].not_before is None or self.model[i].not_before <= self.now)
            ]
            message = self.store.claim_next(receiver, now=self.now)
            assert (message and message.id) == (due[0] if due else None)
            if message is not None:
                self.model[message.id].state = DELIVERING
                self.model[message.id].check(message)

        @precondition(lambda self: bool(self.model))
        @rule(data=st.data())
        def claim(self, data: st.DataObject) -> None:
            message_id = data.draw(st.sampled_from([*sorted(self.model), max(self.model) + 1]))
            message = self.store.claim(message_id)
            expected = self.model.get(message_id)
            if expected is None or expected.state is not PENDING:
                assert message is None, f"claimed message {message_id} while it was not pending"
                return
            assert message is not None
            expected.state = DELIVERING
            expected.check(message)

        @precondition(_has(DELIVERING))
        @rule(data=st.data())
        def deliver(self, data: st.DataObject) -> None:
            message_id = data.draw(st.sampled_from(self.ids_in(DELIVERING)))
            self.model[message_id].state = DELIVERED
            self.model[message_id].check(self.store.mark_delivered(message_id))

        @precondition(_has(DELIVERING))
        @rule(data=st.data(), delay=st.none() | st.integers(0, 5))
        def fail(self, data: st.DataObject, delay: int | None) -> None:
            message_id = data.draw(st.sampled_from(self.ids_in(DELIVERING)))
            self.failures += 1
            reason = f"failure {self.failures}"
            retry_at = None if delay is None else self.now + delay
            expected = self.model[message_id]
            expected.attempts += 1
            expected.last_error = reason
            if retry_at is None:
                expected.state = DEAD
            else:
                expected.state = PENDING
                expected.not_before = retry_at
            expected.check(self.store.mark_failed(message_id, reason, retry_at=retry_at))

        @precondition(_has(DELIVERING))
        @rule(data=st.data())
        def release(self, data: st.DataObject) -> None:
            message_id = data.draw(st.sampled_from(self.ids_in(DELIVERING)))
            self.model[message_id].state = PENDING
            self.model[message_id].check(self.store.release(message_id))

        @precondition(_has(DELIVERING))
        @rule(data=st.data())
        def uncertain(self, data: st.DataObject) -> None:
            message_id = data.draw(st.sampled_from(self.ids_in(DELIVERING)))
            self.failures += 1
            reason = f"unknown {self.failures}"
            self.model[message_id].state = UNCERTAIN
            self.model[message_id].last_error = reason
            self.model[message_id].check(self.store.mark_uncertain(message_id, reason))

        @precondition(_has(PENDING, DELIVERED, DEAD, UNCERTAIN))
        @rule(data=st.data(), action=st.sampled_from(["mark_delivered", "retry", "dead_letter", "release",
                                                      "uncertain"]))
        def refused_transition(self, data: st.DataObject, action: str) -> None:
            message_id = data.draw(st.sampled_from(self.ids_in(PENDING, DELIVERED, DEAD, UNCERTAIN)))
            with pytest.raises(ValueError, match=rf"\b{message_id}\b.*{self.model[message_id].state.value}"):
                _act(self.store, action, message_id)

        @rule(seconds=st.integers(1, 5))
        def tick(self, seconds: int) -> None:
            self.now += seconds

        @rule()
        def reopen(self) -> None:
            self.store.close()
            self.store = make_store(self.place)

        @invariant()
        def store_matches_model(self) -> None:
            everything = self.store.list(limit=len(self.model) + 1)
            assert [m.id for m in everything] == sorted(self.model), "a message was lost or invented"
            for message in everything:
                self.model[message.id].check(message)
            for state in MessageState:
                listed = [m.id for m in self.store.list(state=state, limit=len(self.model) + 1)]
                assert listed == self.ids_in(state), f"list(state={state.value}) disagrees with the model"
            oldest: dict[str, int] = {}
            for i in self.ids_in(PENDING):
                oldest.setdefault(self.model[i].receiver, i)
            assert self.store.receivers_with_pending() == sorted(oldest, key=oldest.__getitem__)

        def teardown(self) -> None:
            self.store.close()

    return InboxModel
