"""The team model: reading snapshots and events as the server sends them, and folding events in."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cao_console.team import (
    Delegation,
    MessageChanged,
    StatusChanged,
    Subscribed,
    Team,
    TerminalCreated,
    TerminalRemoved,
    decode_event,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
EVENT_NAMES = ["subscribed", "terminal_created", "terminal_removed", "status", "message", "ping", "overflow",
               "handoff_started", "handoff_finished", "assign_started", "assign_finished", "later_event"]
IDS = ["00000001", "00000002", "00000003", "00000004"]
STATUSES = ["idle", "processing", "completed", "waiting_user_answer", "error"]


def record(terminal_id: str, session: str = "cao-s", caller: str | None = None, created: float = 0.0,
           status: str = "unknown") -> dict[str, Any]:
    return {"id": terminal_id, "name": f"dev-{terminal_id[-4:]}", "session_name": session,
            "provider": "mock_cli", "agent_profile": "dev", "caller_id": caller, "created_at": created,
            "status": status}


# Events that look like the server's: real names, with fields that may be missing, mistyped or odd.
event_dicts = st.fixed_dictionaries(
    {"event": st.sampled_from(EVENT_NAMES)},
    optional={
        "at": st.floats(allow_nan=True) | st.text(max_size=30) | st.none(),
        "terminal": json_values | st.builds(record, st.sampled_from(IDS), st.sampled_from(["cao-s", "cao-t"]),
                                            st.none() | st.sampled_from(IDS), st.floats(0, 100)),
        "terminal_id": st.sampled_from(IDS) | json_values,
        "session_name": st.text(max_size=8) | json_values,
        "status": st.sampled_from(STATUSES) | json_values,
        "evidence": st.text(max_size=20) | json_values,
        "since": st.floats() | st.text(max_size=30) | json_values,
        "message": json_values | st.fixed_dictionaries({
            "receiver_id": st.sampled_from(IDS), "status": st.sampled_from(["pending", "delivered"])}),
        "caller_id": st.sampled_from(IDS) | json_values,
        "worker_id": st.sampled_from(IDS) | json_values,
    },
)


@given(json_values | event_dicts)
@settings(max_examples=400)
def test_any_event_line_decodes_to_an_event_or_nothing_and_folds_in(data: Any):
    team = Team.from_json({"sessions": [{"name": "cao-s", "terminals": [record(i) for i in IDS[:2]]}]})
    event = decode_event(data)
    if event is None:
        return
    change = team.apply(event)
    # Whatever came in, the team stays a team: every terminal in the session its key names, and the
    # tree holds each terminal exactly once.
    for name, session in team.sessions.items():
        assert all(member.session_name == name for member in session.members.values())
        roots, children = session.roots_and_children()
        shown = [m.id for m in roots] + [m.id for kids in children.values() for m in kids]
        assert sorted(shown) == sorted(session.members)
    assert change.terminals <= {m.id for m in team.members()}


@given(json_values)
def test_any_snapshot_reads_without_raising(data: Any):
    team = Team.from_json(data)
    for member in team.members():
        assert member.id and member.session_name
    Team.from_json({"sessions": [data, {"name": "cao-x", "terminals": [data, record("0000000a")]}]})


operations = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.sampled_from(IDS), st.sampled_from(["cao-s", "cao-t"]),
                  st.none() | st.sampled_from(IDS)),
        st.tuples(st.just("remove"), st.sampled_from(IDS)),
        st.tuples(st.just("status"), st.sampled_from(IDS), st.sampled_from(STATUSES), st.floats(0, 1e9)),
        st.tuples(st.just("handoff"), st.sampled_from(IDS), st.sampled_from(IDS), st.booleans()),
    ),
    max_size=30,
)


@given(operations)
@settings(max_examples=300)
def test_folding_events_agrees_with_a_plain_model(ops: list[tuple[Any, ...]]):
    """After any sequence of events, the team holds exactly the terminals created and not removed since,
    each with its latest status, and each caller waits for exactly the handoffs started and not
    finished whose worker is still there."""
    team = Team()
    alive: dict[str, tuple[str, str | None]] = {}  # id -> (session, caller)
    status: dict[str, str] = {}
    handoffs: dict[str, set[str]] = {}

    def gone(tid: str) -> None:
        alive.pop(tid, None)
        status.pop(tid, None)
        handoffs.pop(tid, None)
        for waits in handoffs.values():
            waits.discard(tid)

    for created, op in enumerate(ops):
        if op[0] == "create":
            _, tid, session, caller = op
            team.apply(decode_event({"event": "terminal_created",
                                     "terminal": record(tid, session, caller, float(created))}))
            if alive.get(tid, ("",))[0] != session:
                if tid in alive:  # moved: a terminal id names one terminal, the old one is gone
                    gone(tid)
                alive[tid], status[tid], handoffs[tid] = (session, caller), "unknown", set()
        elif op[0] == "remove":
            team.apply(decode_event({"event": "terminal_removed", "terminal": record(op[1])}))
            gone(op[1])
        elif op[0] == "status":
            _, tid, new, since = op
            team.apply(StatusChanged(tid, "", new, "because", since))
            if tid in alive:
                status[tid] = new
        else:
            _, caller, worker, started = op
            team.apply(Delegation("handoff", started, caller, worker, 1.0))
            if caller in alive:
                (handoffs[caller].add if started else handoffs[caller].discard)(worker)
    assert {m.id: (m.session_name, m.caller_id) for m in team.members()} == alive
    assert {m.id: m.status for m in team.members()} == status
    for member in team.members():
        assert set(member.handoffs) == handoffs.get(member.id, set())
        kinds = [w.kind for w in member.waiting_for]
        assert ("prompt" in kinds) == (member.status == "waiting_user_answer")
    assert all(session.members for session in team.sessions.values())  # a session ends with its last terminal


def test_the_server_shapes_decode_as_expected():
    terminal = record("0000000b", caller="0000000a", status="idle")
    terminal["created_at"] = "2026-01-01T12:00:00+00:00"
    created = decode_event({"event": "terminal_created", "terminal": terminal})
    assert isinstance(created, TerminalCreated)
    assert created.member.created_at == 1_767_268_800.0 and created.member.caller_id == "0000000a"
    assert decode_event({"event": "terminal_removed", "terminal": terminal}) == TerminalRemoved("0000000b",
                                                                                                "cao-s")
    assert decode_event({"event": "status", "terminal_id": "0000000b", "session_name": "cao-s",
                         "status": "processing", "evidence": "spinner", "since": 5}) == StatusChanged(
        "0000000b", "cao-s", "processing", "spinner", 5.0)
    assert decode_event({"event": "message", "message": {"receiver_id": "0000000b", "sender_id": "user",
                                                         "status": "pending"}}) == MessageChanged(
        "0000000b", "user", "pending")
    assert decode_event({"event": "handoff_finished", "caller_id": "0000000a", "worker_id": "0000000b",
                         "at": 3}) == Delegation("handoff", False, "0000000a", "0000000b", 3.0)
    assert decode_event({"event": "subscribed", "at": 1}) == Subscribed(1.0)
    assert decode_event({"event": "ping", "at": 1}) is None
    assert decode_event({"event": "some_future_event"}) is None


def test_a_snapshot_in_the_team_shape_reads_every_field():
    team = Team.from_json({"at": 9, "sessions": [{"name": "cao-s", "status": "detached", "terminals": [
        {**record("0000000a"), "status": "processing", "evidence": "spinner", "since": 4.5,
         "pending_messages": 3, "delegation": None,
         "waiting_for": [{"kind": "handoff", "worker_id": "0000000b", "since": 6},
                         {"kind": "messages", "count": 3}]},
        {**record("0000000b", caller="0000000a"), "status": "waiting_user_answer", "since": 7,
         "delegation": {"kind": "handoff", "caller_id": "0000000a", "started_at": 6}, "waiting_for": []},
    ]}]})
    boss, worker = team.find("0000000a"), team.find("0000000b")
    assert boss is not None and worker is not None
    assert (boss.status, boss.evidence, boss.since) == ("processing", "spinner", 4.5)
    assert boss.pending_messages == 3
    assert [(w.kind, w.worker_id, w.count) for w in boss.waiting_for] == [("handoff", "0000000b", 0),
                                                                           ("messages", None, 3)]
    assert worker.delegation == "handoff"
    assert [(w.kind, w.since) for w in worker.waiting_for] == [("prompt", 7.0)]
    roots, children = team.sessions["cao-s"].roots_and_children()
    assert [m.id for m in roots] == ["0000000a"] and [m.id for m in children["0000000a"]] == ["0000000b"]


def test_a_worker_whose_caller_is_gone_or_caught_in_a_cycle_still_shows():
    team = Team.from_json({"sessions": [{"name": "cao-s", "terminals": [
        record("0000000a", caller="0000000b"), record("0000000b", caller="0000000a"),
        record("0000000c", caller="0000000f")]}]})
    roots, children = team.sessions["cao-s"].roots_and_children()
    assert sorted(m.id for m in roots) == ["0000000a", "0000000b", "0000000c"] and not children


def test_a_warm_pool_session_is_labelled_as_one():
    from cao_console.render import session_label
    from cao_console.team import Session

    pooled = session_label(Session(name="cao-pool-1a2b3c4d"))
    assert pooled.plain == "cao-pool-1a2b3c4d  0 terminals  warm pool"
    assert session_label(Session(name="cao-team")).plain == "cao-team  0 terminals"
