"""What a console reads from a real server: the team in one answer (who started whom, statuses with their
evidence, what each terminal waits for), the event stream as server-sent events, the recent history with
handoffs and their durations, the plugins, and an operator's retry and cancel over HTTP."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx
import pytest
from cao_server.client import HttpKernel
from cao_testkit.serve import serve_in_thread
from cao_testkit.waiting import wait_until

from cao_hookspecs import CreateTerminalRequest, TerminalStatus
from cao_hookspecs.errors import Conflict, InvalidInput, NotFound

pytestmark = pytest.mark.tmux


@pytest.fixture
def served(make_kernel):
    with serve_in_thread(make_kernel(agents=("supervisor", "developer"))) as running:
        yield running


def _http(served) -> httpx.Client:
    return httpx.Client(base_url=served.url, trust_env=False, timeout=30)


def _handoff_in_thread(served, caller: str, message: str) -> threading.Thread:
    def run() -> None:
        with _http(served) as http:
            http.post(f"/terminals/{caller}/handoff", json={"agent_profile": "developer", "message": message,
                                                            "timeout": 30})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_team_shows_who_started_whom_and_what_each_waits_for(served, workdir):
    with _http(served) as http:
        supervisor = http.post("/sessions", json={"agent_profile": "supervisor", "session_name": "team",
                                                  "working_directory": workdir}).json()
        busy = http.post("/sessions/cao-team/terminals", json={"agent_profile": "developer",
                                                               "working_directory": workdir}).json()
        http.post(f"/terminals/{busy['id']}/input", json={"message": "__mock_sleep_5"})
        http.post(f"/terminals/{busy['id']}/inbox/messages", json={"sender_id": supervisor["id"],
                                                                   "message": "when you can"})
        thread = _handoff_in_thread(served, supervisor["id"], "__mock_sleep_3")

        def worker_started():
            # The handoff counts as started once its task is on its way to the worker.
            terminals = http.get("/team").json()["sessions"][0]["terminals"]
            boss = next(t for t in terminals if t["id"] == supervisor["id"])
            worker = next((t for t in terminals if t["caller_id"] == supervisor["id"]), None)
            return worker if boss["waiting_for"] else None

        worker = wait_until(worker_started, 15.0, "the handoff's worker in the team", interval=0.05)
        team = http.get("/team", params={"session": "team"}).json()
        assert isinstance(team["at"], float)
        (session,) = team["sessions"]
        assert session["name"] == "cao-team"
        rows = {t["id"]: t for t in session["terminals"]}
        assert set(rows) == {supervisor["id"], busy["id"], worker["id"]}
        boss = rows[supervisor["id"]]
        assert {"kind": "handoff", "worker_id": worker["id"]}.items() <= boss["waiting_for"][0].items()
        assert boss["delegation"] is None and boss["caller_id"] is None
        assert rows[worker["id"]]["delegation"]["kind"] == "handoff"
        assert rows[worker["id"]]["delegation"]["caller_id"] == supervisor["id"]
        assert rows[busy["id"]]["pending_messages"] == 1
        assert {"kind": "messages", "count": 1} in rows[busy["id"]]["waiting_for"]
        assert rows[busy["id"]]["status"] == "processing" and rows[busy["id"]]["evidence"]
        assert isinstance(rows[busy["id"]]["since"], float)
        thread.join(30)
        def worker_removed() -> dict[str, Any] | None:  # a handoff removes its worker once it answered
            rows = {t["id"]: t for t in http.get("/team").json()["sessions"][0]["terminals"]}
            return None if worker["id"] in rows else rows

        after = wait_until(worker_removed, 10.0, "the handoff's worker was never removed", interval=0.02)
        assert all(w["kind"] != "handoff" for w in after[supervisor["id"]]["waiting_for"])
        assert http.get("/team", params={"session": "nothing"}).json()["sessions"] == []
        assert http.get("/team", params={"session": "bad name!"}).status_code == 400


def test_history_keeps_handoffs_with_durations_in_order(served, workdir):
    with _http(served) as http:
        supervisor = http.post("/sessions", json={"agent_profile": "supervisor", "session_name": "hist",
                                                  "working_directory": workdir}).json()
        http.post("/sessions", json={"agent_profile": "developer", "session_name": "other",
                                     "working_directory": workdir})
        _handoff_in_thread(served, supervisor["id"], "__mock_sleep_0.3").join(30)
        events = http.get("/events/history", params={"session": "hist"}).json()
        kinds = [e["event"] for e in events]
        assert "handoff_started" in kinds and "handoff_finished" in kinds
        started = events[kinds.index("handoff_started")]
        finished = events[kinds.index("handoff_finished")]
        assert started["caller_id"] == supervisor["id"] == finished["caller_id"]
        assert started["worker_id"] == finished["worker_id"] and finished["success"] is True
        assert 0.3 <= finished["duration"] < 30
        seqs = [e["seq"] for e in events]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        assert all(e.get("session_name", "cao-hist") == "cao-hist" for e in events if e["event"] == "status")
        everything = http.get("/events/history").json()
        assert len(everything) > len(events)
        assert len(http.get("/events/history", params={"limit": 2}).json()) == 2
        assert http.get("/events/history", params={"limit": 0}).status_code == 422


def test_server_sent_events_carry_the_same_events(served, workdir):
    lines: list[str] = []
    seen = threading.Event()

    def follow() -> None:
        with _http(served) as http, http.stream("GET", "/events", headers={"Accept": "text/event-stream"},
                                                timeout=httpx.Timeout(10, read=None)) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            for line in stream.iter_lines():
                lines.append(line)
                if line.startswith("data:") and '"terminal_created"' in line:
                    seen.set()
                    return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    wait_until(lambda: any(line.startswith("data:") for line in lines), 10.0, "the subscribed event")
    with _http(served) as http:
        http.post("/sessions", json={"agent_profile": "developer", "session_name": "sse",
                                     "working_directory": workdir})
    assert seen.wait(15)
    assert lines[0] == "retry: 2000"
    data = [json.loads(line[5:]) for line in lines if line.startswith("data:")]
    assert data[0]["event"] == "subscribed" and data[-1]["event"] == "terminal_created"
    assert isinstance(data[-1]["seq"], int)


def test_plugins_are_listed_as_cao_plugins_lists_them(served):
    with _http(served) as http:
        names = {p["name"]: p for p in http.get("/plugins").json()}
    assert {"tmux", "mock_cli", "inbox_sqlite"} <= set(names)
    assert names["tmux"]["status"] == "active" and names["tmux"]["distribution"] == "cao-tmux"


async def test_retry_and_cancel_over_http(served, workdir):
    async with HttpKernel(served.url) as api:
        request = CreateTerminalRequest(agent_profile="developer", session_name="ops", working_directory=workdir)
        sender = await api.create_session(request)
        receiver = await api.create_terminal(request)
        await api.send_input(receiver.id, "__mock_sleep_2")
        await api.wait_for_status(receiver.id, [TerminalStatus.PROCESSING], timeout=5)
        waiting = await api.send_message(sender.id, receiver.id, "over http")
        dead = await api.cancel_message(waiting.id)
        assert dead.state.value == "dead" and "cancelled" in dead.last_error
        with pytest.raises(Conflict, match="not pending"):
            await api.cancel_message(waiting.id)
        again = await api.retry_message(waiting.id)
        assert again.state.value == "pending" and again.attempts == 0
        with pytest.raises(NotFound):
            await api.retry_message(987654)
        with pytest.raises(InvalidInput):
            await api.retry_message(0)
        await asyncio.sleep(0)
    with _http(served) as http:
        assert http.post("/messages/abc/retry").status_code == 422
        assert http.post("/messages/-1/cancel").status_code == 422
        assert http.get("/terminals/0badf00d/attach-command").status_code == 404
        assert http.get("/terminals/nothex!/attach-command").status_code == 422


async def test_the_client_reads_the_team_and_makes_login_links(make_kernel, cao_home, workdir):
    from cao_server.api_token import ensure_token

    token = ensure_token(cao_home)
    with serve_in_thread(make_kernel(agents=("developer",)), token=token) as running:
        async with HttpKernel(running.url, token=token) as api:
            made = await api.create_session(CreateTerminalRequest(
                agent_profile="developer", session_name="cli", working_directory=workdir))
            team = await api.team("cli")  # the prefix is added, as everywhere
            assert [t["id"] for t in team["sessions"][0]["terminals"]] == [made.id]
            assert (await api.team())["sessions"][0]["name"] == "cao-cli"
            link = await api.login_link()
        with httpx.Client(timeout=10) as browser:
            assert browser.get(link).status_code == 200
            assert browser.get(f"{running.url}/team").status_code == 200
            assert browser.get(link).status_code == 401  # once


async def test_the_event_filter_takes_a_name_with_or_without_its_prefix(served, workdir):
    async with HttpKernel(served.url) as api:
        seen: list[dict] = []

        async def follow():
            async for event in api.events("pref"):
                seen.append(event)

        follower = asyncio.ensure_future(follow())
        await asyncio.sleep(0.3)
        await api.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="pref", working_directory=workdir))
        for _ in range(100):
            if any(e["event"] == "terminal_created" for e in seen):
                break
            await asyncio.sleep(0.05)
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        assert any(e["event"] == "terminal_created" for e in seen), seen
