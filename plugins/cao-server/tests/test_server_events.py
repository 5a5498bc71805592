"""``GET /events`` on a real uvicorn: every terminal, status change and message state, in order, even
when a worker is created, answers and is deleted faster than anyone could poll."""

from __future__ import annotations

import asyncio
import contextlib
import time

import httpx
import pytest
from cao_server.client import HttpKernel
from cao_testkit.serve import serve_in_thread
from cao_testkit.waiting import eventually

from cao_hookspecs import CaoError, CreateTerminalRequest, TerminalStatus

pytestmark = pytest.mark.tmux


@pytest.fixture
def served(make_kernel):
    with serve_in_thread(make_kernel(agents=("supervisor", "developer"))) as running:
        yield running


async def _collect(api: HttpKernel, session: str | None, into: list[dict], subscribed: asyncio.Event) -> None:
    async for event in api.events(session):
        into.append(event)
        if event["event"] == "subscribed":
            subscribed.set()


async def test_a_short_lived_worker_and_its_messages_all_appear_in_order(served, workdir):
    async with HttpKernel(served.url) as api, HttpKernel(served.url) as other:
        events: list[dict] = []
        everything: list[dict] = []
        subscribed, all_subscribed = asyncio.Event(), asyncio.Event()
        supervisor = await api.create_session(CreateTerminalRequest(
            agent_profile="supervisor", session_name="ev", working_directory=workdir))
        follower = asyncio.ensure_future(_collect(api, "cao-ev", events, subscribed))
        unfiltered = asyncio.ensure_future(_collect(other, None, everything, all_subscribed))
        await subscribed.wait()
        await all_subscribed.wait()
        noise = await api.create_session(CreateTerminalRequest(
            agent_profile="developer", session_name="elsewhere", working_directory=workdir))

        worker = await api.create_terminal(CreateTerminalRequest(
            session_name="cao-ev", agent_profile="developer", working_directory=workdir))
        message = await api.send_message(supervisor.id, worker.id, "hello worker")
        await api.wait_for_status(worker.id, [TerminalStatus.COMPLETED], timeout=10)
        await api.delete_terminal(worker.id)
        await eventually(lambda: any(e["event"] == "terminal_removed" for e in events), 10.0,
                         "the worker's removal among the events", interval=0.02)

        kinds = [e["event"] for e in events]
        assert kinds[0] == "subscribed"
        created = kinds.index("terminal_created")
        removed = kinds.index("terminal_removed")
        assert events[created]["terminal"]["id"] == worker.id == events[removed]["terminal"]["id"]
        statuses = [e["status"] for e in events if e["event"] == "status" and e["terminal_id"] == worker.id]
        assert statuses[:1] == ["idle"] and "processing" in statuses and "completed" in statuses, statuses
        assert all(isinstance(e["since"], float) for e in events if e["event"] == "status")
        states = [e["message"]["status"] for e in events if e["event"] == "message"
                  and e["message"]["id"] == message.id]
        assert states == ["pending", "delivered"], states
        # Filtered by session: the other session's terminal is not in this stream, but in the whole one.
        assert all(e.get("terminal", {}).get("id") != noise.id for e in events)
        assert any(e.get("terminal", {}).get("id") == noise.id for e in everything)
        follower.cancel()
        unfiltered.cancel()
        await asyncio.gather(follower, unfiltered, return_exceptions=True)


async def test_a_plugins_activity_reaches_the_stream_and_bad_reports_are_refused_by_name(served):
    async with HttpKernel(served.url) as api, HttpKernel(served.url) as other:
        events: list[dict] = []
        everything: list[dict] = []
        subscribed, all_subscribed = asyncio.Event(), asyncio.Event()
        follower = asyncio.ensure_future(_collect(api, "cao-flow-daily", events, subscribed))
        unfiltered = asyncio.ensure_future(_collect(other, None, everything, all_subscribed))
        await subscribed.wait()
        await all_subscribed.wait()
        before = time.time()
        first = await api.report_activity("flow.run", {"run_id": 7, "state": "started",
                                                       "session_name": "cao-flow-daily", "summary": "daily"})
        assert first.kind == "flow.run" and first.data["run_id"] == 7 and before <= first.at <= time.time()
        await api.report_activity("workflow.step", {"run_id": "w1", "state": "done"})
        for kind, data, problem in (
            ("Flow.Run", {}, "invalid activity kind 'Flow.Run'"),
            ("flow", {}, "invalid activity kind 'flow'"),
            ("flow.run", {"big": "x" * 17_000}, "limit"),
        ):
            with pytest.raises(CaoError, match=problem):
                await api.report_activity(kind, data)
        await eventually(lambda: sum(e["event"] == "activity" for e in everything) == 2, 10.0,
                         "both activities in the stream", interval=0.02)
        mine = [e for e in events if e["event"] == "activity"]
        assert [(e["kind"], e["data"]["state"], e["session_name"]) for e in mine] == [
            ("flow.run", "started", "cao-flow-daily")]
        seen = [e for e in everything if e["event"] == "activity"]
        assert [e["kind"] for e in seen] == ["flow.run", "workflow.step"] and seen[1]["session_name"] is None
        assert seen[0]["seq"] < seen[1]["seq"]
        follower.cancel()
        unfiltered.cancel()
        await asyncio.gather(follower, unfiltered, return_exceptions=True)
    with httpx.Client(base_url=served.url, trust_env=False, timeout=10) as http:
        history = http.get("/events/history", params={"session": "cao-flow-daily"}).json()
        assert [e["kind"] for e in history if e["event"] == "activity"] == ["flow.run"]


def test_a_bad_session_name_is_refused_and_the_route_is_documented(served):
    with httpx.Client(base_url=served.url, trust_env=False, timeout=10) as http:
        refused = http.get("/events", params={"session": "bad name!"})
        assert refused.status_code == 400 and "invalid session name" in refused.json()["detail"]
        assert "/events" in http.get("/openapi.json").json()["paths"]


def test_a_stopping_server_ends_the_stream_at_once(make_kernel):
    import threading

    kernel = make_kernel()
    lines: list[str] = []
    ended = threading.Event()

    def read(url: str) -> None:
        with httpx.Client(base_url=url, trust_env=False) as http, \
                http.stream("GET", "/events", timeout=httpx.Timeout(10, read=None)) as response:
            assert response.headers["content-type"].startswith("application/x-ndjson")
            for line in response.iter_lines():
                lines.append(line)
        ended.set()

    with serve_in_thread(kernel) as running:
        reader = threading.Thread(target=read, args=(running.url,), daemon=True)
        reader.start()
        deadline = time.monotonic() + 10
        while not lines and time.monotonic() < deadline:
            time.sleep(0.01)
        stopping = time.monotonic()
    # uvicorn would wait its whole graceful period (2 s here) for a stream that never ends by itself.
    assert time.monotonic() - stopping < 1.5
    assert ended.wait(5)
    assert '"event":"subscribed"' in lines[0]


async def test_a_subscriber_that_never_reads_is_dropped_with_a_reason(make_kernel, workdir):
    """Each message event holds its whole body: a subscriber that does not read may hold at most
    16 MiB of them, then it is dropped and its stream ends with a line saying why."""
    import json
    import socket

    limit = 16 * 1024 * 1024  # cao_server.events.BACKLOG_BYTES
    body = "x" * (1024 * 1024 - 256)  # room for the sender line cao appends
    count = 2 * limit // len(body) + 8
    uncapped = {"CAO_INBOX_MAX_PENDING": "0", "CAO_INBOX_MAX_PENDING_BYTES": "0"}  # this many may wait
    kernel = make_kernel(agents=("supervisor", "developer"), **uncapped)
    with serve_in_thread(kernel) as served, contextlib.closing(socket.socket()) as stuck:
        async with HttpKernel(served.url) as api:
            sender = await api.create_session(CreateTerminalRequest(
                agent_profile="supervisor", session_name="slow", working_directory=workdir))
            receiver = await api.create_terminal(CreateTerminalRequest(
                session_name="cao-slow", agent_profile="developer", working_directory=workdir))
            await api.send_input(receiver.id, "__mock_sleep_60")  # busy: the messages wait in its inbox
            await api.wait_for_status(receiver.id, [TerminalStatus.PROCESSING], timeout=10)
            stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stuck.connect(("127.0.0.1", served.port))
            stuck.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            for _ in range(count):
                await api.send_message(sender.id, receiver.id, body)
            await asyncio.sleep(0.5)
        # Now read it all: what waited was let go, so far less than what was sent arrives.
        received = bytearray()
        stuck.settimeout(10)
        deadline = time.monotonic() + 20
        # Until the chunked stream's last chunk; before, it never came (pings followed the messages).
        while not received.endswith(b"\r\n0\r\n\r\n") and time.monotonic() < deadline:
            chunk = await asyncio.to_thread(stuck.recv, 1 << 20)
            if not chunk:
                break
            received += chunk
    lines = [line for line in bytes(received).split(b"\n") if line.startswith(b"{")]
    last = json.loads(lines[-1])
    assert last["event"] == "overflow", last
    assert "read too slowly" in last["reason"] and last["limit_bytes"] == limit
    messages = sum(1 for line in lines if line.startswith(b'{"event":"message"'))
    assert messages * len(body) <= limit + 4 * len(body), (messages, count)
