"""The Team page follows a working team live: read once, then changed only by pushed events."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from .conftest import api, start_session

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

RECORDER = (Path(__file__).with_name("recorder.js")).read_text(encoding="utf-8")
TASK = ("Analyze these three datasets and write a report. Dataset A: [1, 2, 3, 4, 5]. "
        "Dataset B: [10, 20, 30, 40, 50, 60]. Dataset C: [2, 4, 4, 4, 5, 5, 7, 9].")


def seen(console):
    return console.page.evaluate("window.__seen")


def statuses_of(rows, terminal_id):
    out = []
    for row in rows:
        if row["id"] == terminal_id and not row["removed"] and (not out or out[-1] != row["status"]):
            out.append(row["status"])
    return out


def live_team_page(console):
    console.log_in()
    console.page.locator(".connection[data-state=live]").wait_for()
    console.page.evaluate(RECORDER)
    # A mark that a reload would lose.
    console.page.evaluate("window.__same_page = true")


def test_the_assign_examples_team_shows_up_and_changes_without_a_reload(console):
    live_team_page(console)
    page = console.page
    supervisor = start_session(console.server, "analysis_supervisor", session_name="assign-live")
    sid = supervisor["id"]
    with api(console.server) as http:
        assert http.post(f"/terminals/{sid}/input", json={"message": TASK}).status_code == 200

    # The three analysts, each shown under the supervisor that assigned it.
    def analysts():
        return {r["id"] for r in seen(console) if r["profile"] == "data_analyst" and r["parent"] == sid}

    workers = console.wait(lambda: len(analysts()) == 3 and analysts(), timeout=60, what="three analysts")
    # The handoff's worker too, and its caller waiting for it.
    waits = page.locator(f'li.terminal[data-terminal-id="{sid}"] > .row .waits')
    console.wait(lambda: "handoff to report_generator" in waits.inner_text(), timeout=60,
               what="the supervisor shown waiting for its handoff")
    console.screenshot("team")
    assert any(r["profile"] == "report_generator" and r["parent"] == sid for r in seen(console))
    # The supervisor deletes each analyst once its result is in; the report ends its work.
    console.wait(lambda: workers <= {r["id"] for r in seen(console) if r["removed"]}, timeout=90,
               what="every analyst removed from the page")
    row = page.locator(f'li.terminal[data-terminal-id="{sid}"]')
    console.wait(lambda: row.get_attribute("data-status") in ("completed", "idle") and
               "DATA ANALYSIS REPORT" in _output(console, sid), timeout=90, what="the report")
    rows = seen(console)
    assert "processing" in statuses_of(rows, sid), statuses_of(rows, sid)
    for worker in workers:
        assert "processing" in statuses_of(rows, worker), (worker, statuses_of(rows, worker))
    assert page.locator(f'li.terminal[data-terminal-id="{sid}"] li.terminal').count() == 0
    # Read once, then only pushed: no second /team, no reload, one event stream.
    assert len(console.paths("/team")) == 1, console.paths("/team")
    assert len(console.paths("/events")) == 1
    assert page.evaluate("window.__same_page === true && performance.getEntriesByType('navigation').length")
    # The same run on the Messages page: every result the analysts sent, and the timeline.
    console.open("#/messages/cao-assign-live")
    page.locator("tr[data-message-id]").first.wait_for()
    console.wait(lambda: page.locator("ol.timeline li").count() > 10, what="the session's timeline")
    assert page.locator("tr[data-message-id]").count() >= 4  # three results, the report's task, the task
    console.screenshot("messages")
    with api(console.server) as http:
        http.delete("/sessions/cao-assign-live")


def test_stopping_a_worker_removes_it_and_leaves_its_supervisor(console):
    live_team_page(console)
    page = console.page
    boss = start_session(console.server, session_name="stop-one")
    with api(console.server) as http:
        added = http.post(f"/sessions/{boss['session_name']}/terminals",
                          json={"agent_profile": "developer", "provider": "mock_cli", "caller_id": boss["id"],
                                "working_directory": str(console.server.workdir)})
        assert added.status_code == 201, added.text
    worker = added.json()["id"]
    nested = page.locator(f'li.terminal[data-terminal-id="{boss["id"]}"] li[data-terminal-id="{worker}"]')
    nested.wait_for()
    nested.get_by_role("button", name=f"Stop developer {worker}").click()
    dialog = page.get_by_role("dialog")
    assert worker in dialog.inner_text()
    dialog.get_by_role("button", name="Stop terminal").click()
    nested.wait_for(state="detached")
    assert page.locator(f'li.terminal[data-terminal-id="{boss["id"]}"]').is_visible()
    with api(console.server) as http:
        assert http.get(f"/terminals/{worker}").status_code == 404
        assert http.get(f"/terminals/{boss['id']}").status_code == 200
        http.delete(f"/sessions/{boss['session_name']}")
    page.locator(f'section.session[data-session="{boss["session_name"]}"]').wait_for(state="detached")
    assert len(console.paths("/team")) == 1


def test_cancelling_the_confirmation_stops_nothing(console):
    live_team_page(console)
    page = console.page
    boss = start_session(console.server, session_name="keep-me")
    section = page.locator(f'section.session[data-session="{boss["session_name"]}"]')
    section.get_by_role("button", name="Stop session").click()
    page.keyboard.press("Escape")
    page.get_by_role("dialog").wait_for(state="detached")
    with api(console.server) as http:
        assert http.get(f"/terminals/{boss['id']}").status_code == 200
        http.delete(f"/sessions/{boss['session_name']}")
    section.wait_for(state="detached")


def _output(console, terminal_id):
    with api(console.server) as http:
        answer = http.get(f"/terminals/{terminal_id}/output", params={"mode": "last"})
        return answer.text if answer.status_code == 200 else ""


def test_after_an_overflow_the_page_reads_the_team_again(console):
    # The first stream is a stand-in that ends as the server ends a reader that fell behind: an overflow
    # event, then the end. The browser reconnects; that request is held until the team has changed.
    held = []
    first = ('retry: 100\n\ndata: {"event":"subscribed","at":1}\n\n'
             'data: {"event":"overflow","at":2,"reason":"this subscriber read too slowly"}\n\n')

    def events(route):
        if not held and not console.paths("/team"):
            route.fulfill(status=200, headers={"content-type": "text/event-stream"}, body=first)
        else:
            held.append(route)

    console.page.route("**/events", events)
    console.log_in()
    page = console.page
    console.wait(lambda: held, what="the browser reconnecting")
    missed = start_session(console.server, session_name="while-away")
    held[0].continue_()
    page.locator(f'li.terminal[data-terminal-id="{missed["id"]}"]').wait_for()
    page.locator(".connection[data-state=live]").wait_for()
    assert len(console.paths("/team")) == 2
    with api(console.server) as http:
        http.delete(f"/sessions/{missed['session_name']}")
    page.locator(f'li.terminal[data-terminal-id="{missed["id"]}"]').wait_for(state="detached")


def test_what_each_terminal_waits_for_and_what_agents_wrote_are_shown_as_text(console):
    # A team the server could report, answered in place of GET /team: every kind of wait at once, and
    # text from agents' screens holding markup and escape sequences.
    now = time.time()
    hostile = '<script>alert(4)</script><img src=x onerror="alert(5)"> \x1b[1mbold?'

    def terminal(tid, profile, status, since, **fields):
        return {"id": tid, "name": f"{profile}-{tid[:4]}", "session_name": "cao-shown",
                "provider": "mock_cli", "agent_profile": profile, "working_directory": "/work",
                "caller_id": None, "status": status, "evidence": "", "since": since, "pending_messages": 0,
                "delegation": None, "waiting_for": [], **fields}

    session = {"name": "cao-shown", "status": "detached", "working_directory": "/work", "terminals": [
        terminal("aaaa0001", "lead", "waiting_user_answer", now - 130, evidence=hostile, pending_messages=2,
                 waiting_for=[{"kind": "handoff", "worker_id": "aaaa0002", "since": now - 12},
                              {"kind": "messages", "count": 2}, {"kind": "prompt", "since": now - 130}]),
        terminal("aaaa0002", "writer", "processing", now - 12, caller_id="aaaa0001",
                 delegation={"kind": "handoff", "caller_id": "aaaa0001", "started_at": now - 12}),
        terminal("aaaa0003", "analyst", "idle", now - 3700, caller_id="aaaa0001",
                 delegation={"kind": "assign", "caller_id": "aaaa0001", "started_at": now - 3800}),
        terminal("aaaa0004", "orphan", "error", now - 5, caller_id="ffffffff"),
    ]}
    snapshot = {"at": now, "sessions": [session]}
    console.page.route("**/team", lambda route: route.fulfill(json=snapshot))
    # Which two messages are pending is read for the terminal that has some (later events count them).
    pending = [{"id": n, "sender_id": "user", "receiver_id": "aaaa0001", "message": "m", "status": "pending"}
               for n in (7, 8)]
    console.page.route("**/terminals/aaaa0001/inbox/messages?*", lambda route: route.fulfill(json=pending))
    console.log_in()
    page = console.page
    lead = page.locator('li.terminal[data-terminal-id="aaaa0001"]')
    lead.wait_for()
    row = lead.locator("> .row")
    assert row.locator(".badge").inner_text() == "waiting user answer"
    assert "for 2 min" in row.inner_text()
    waits = row.locator(".waits").inner_text()
    assert re.search(r"handoff to writer aaaa0002 \(1[23] s\)", waits), waits
    assert "2 messages pending" in waits and "a prompt awaiting an answer (2 min)" in waits
    assert "handed off by lead aaaa0001" in lead.locator('li[data-terminal-id="aaaa0002"]').inner_text()
    analyst = lead.locator('li[data-terminal-id="aaaa0003"]')
    assert "for 1 h" in analyst.inner_text() and "assigned by lead aaaa0001" in analyst.inner_text()
    # A caller that is not in the session: the terminal is a root of the tree.
    roots = page.locator('section[data-session="cao-shown"] > ul > li')
    assert roots.evaluate_all("rows => rows.map(r => r.dataset.terminalId)") == ["aaaa0001", "aaaa0004"]
    evidence = lead.locator("> .detail .evidence").inner_text()
    assert evidence == hostile.replace("\x1b", "\u241b")
    assert page.locator("main script, main img").count() == 0


def test_a_warm_worker_shows_in_its_pool_then_moves_under_the_caller_that_takes_it(console):
    """warm_helper keeps one agent started ahead (its profile's pool): after a first delegation starts the
    pool, its agent waits in a session marked as a pool, and the next delegation's worker is that agent,
    shown under its caller with no reload while the pool's session goes and the pool fills again."""
    live_team_page(console)
    page = console.page
    boss = start_session(console.server, session_name="warm-boss")
    with api(console.server) as http:
        def assign() -> str:
            done = http.post(f"/terminals/{boss['id']}/assign",
                             params={"agent_profile": "warm_helper", "message": "help"})
            assert done.status_code == 200, done.text
            return done.json()["terminal_id"]

        first = assign()
        pool = page.locator("section.session:has(.session-head .badge.pool)")
        pool.first.wait_for()
        badge = pool.first.locator(".session-head .badge.pool")
        assert badge.inner_text() == "warm pool" and "started ahead" in badge.get_attribute("title")
        sessions = http.get("/team").json()["sessions"]
        (pooled,) = [t["id"] for s in sessions if s["name"].startswith("cao-pool-") for t in s["terminals"]]
        taken = assign()
        assert taken == pooled and taken != first
        under_boss = f'li.terminal[data-terminal-id="{boss["id"]}"] li[data-terminal-id="{taken}"]'
        page.locator(f'section.session[data-session="{boss["session_name"]}"] {under_boss}').wait_for()
        page.locator(f'section.session:not([data-session="{boss["session_name"]}"]) '
                     f'li[data-terminal-id="{taken}"]').wait_for(state="detached")
        assert page.evaluate("window.__same_page") is True
        http.delete(f"/sessions/{boss['session_name']}")


def test_flow_and_workflow_runs_show_with_their_latest_report(console):
    with api(console.server) as http:
        # Before the page opens: read from the event history.
        first = {"run_id": 1, "flow": "daily", "state": "started", "summary": "flow daily: started"}
        assert http.post("/activity", json={"kind": "flow.run", "data": first}).status_code == 201
    console.log_in()
    runs = console.page.get_by_role("list", name="flow and workflow runs")
    daily = runs.locator('li.run[data-run="flow:1"]')
    console.wait(lambda: daily.count() == 1 and "flow daily: started" in daily.inner_text(), timeout=10,
                 what="the run read from the history")
    with api(console.server) as http:
        for data in ({"run_id": "w-1", "name": "analysis", "state": "running", "summary": "running"},
                     {"run_id": "w-1", "name": "analysis", "state": "waiting", "step": "approval",
                      "summary": "Approve the <b>report</b>?"},
                     {"run_id": 1, "flow": "daily", "state": "completed", "summary": "daily: completed"}):
            kind = "flow.run" if data.get("flow") else "workflow.step"
            assert http.post("/activity", json={"kind": kind, "data": data}).status_code == 201
    console.wait(lambda: daily.get_attribute("data-state") == "completed", timeout=10, what="the flow's end")
    assert "daily: completed" in daily.inner_text()
    workflow = runs.locator('li.run[data-run="workflow:w-1"]')
    assert workflow.get_attribute("data-state") == "waiting"
    assert "Approve the <b>report</b>?" in workflow.inner_text()  # shown as text
    assert runs.locator("li.run").count() == 2 and runs.locator("b").count() == 0
    assert runs.locator("li.run").first.get_attribute("data-run") == "flow:1"  # the latest report first
