"""The Messages page: messages change state on screen as they do in the inbox, Retry and Cancel act on
them, and whatever a message holds is shown as text."""

from __future__ import annotations

import os
import signal

import pytest

from .conftest import api, start_session

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

# Notes every state each message row shows, in order.
STATES = """() => {
  window.__states = {};
  const note = (tr) => {
    const list = (window.__states[tr.dataset.messageId] ||= []);
    if (list[list.length - 1] !== tr.dataset.state) list.push(tr.dataset.state);
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes' && r.target.matches('tr[data-message-id]')) note(r.target);
      for (const n of r.addedNodes) if (n.nodeType === 1 && n.matches('tr[data-message-id]')) note(n);
    }
  }).observe(document.getElementById('app'),
    {subtree: true, childList: true, attributes: true, attributeFilter: ['data-state']});
}"""


def busy(server, terminal_id, seconds):
    """Keep the mock agent busy for ``seconds``: messages to it wait in its inbox meanwhile."""
    with api(server) as http:
        typed = http.post(f"/terminals/{terminal_id}/input", json={"message": f"__mock_sleep_{seconds}"})
        assert typed.status_code == 200, typed.text
        answer = http.get(f"/terminals/{terminal_id}/wait", params={"status": "processing", "timeout": 10})
        assert answer.status_code == 200, answer.text


def send(server, receiver, text):
    with api(server) as http:
        sent = http.post(f"/terminals/{receiver}/inbox/messages",
                         json={"sender_id": "tester", "message": text})
        assert sent.status_code == 200, sent.text
        return sent.json()["message_id"]


def crash(server, terminal_id):
    """Kill the agent's process group, as a crash would (the terminal stays, its agent is gone)."""
    with api(server) as http:
        terminal = http.get(f"/terminals/{terminal_id}").json()
    target = f"{terminal['session_name']}:{terminal['name']}"
    shown = server.tmux.run("display-message", "-p", "-t", target, "#{pane_pid}")
    os.killpg(os.getpgid(int(shown.stdout.strip())), signal.SIGKILL)


def screen(http, terminal_id):
    return http.get(f"/terminals/{terminal_id}/output").json()["output"]


def messages_page(console, session):
    console.log_in(f"#/messages/{session}")
    console.page.get_by_role("heading", name="Timeline").wait_for()
    console.page.locator(".connection[data-state=live]").wait_for()
    console.page.evaluate(STATES)


def states(console, message_id):
    return console.page.evaluate("id => (window.__states || {})[id] || []", str(message_id))


def test_a_message_is_seen_pending_then_delivered(console):
    agent = start_session(console.server, session_name="inbox-live")
    messages_page(console, agent["session_name"])
    team = console.context.new_page()
    team.goto(console.server.url + "/#/team")
    busy(console.server, agent["id"], 4)
    message = send(console.server, agent["id"], "report when you are free")
    row = console.page.locator(f'tr[data-message-id="{message}"]')
    console.wait(lambda: row.get_attribute("data-state") == "pending", timeout=10, what="shown pending")
    # The Team page says the agent has a message waiting, and when it no longer has.
    waits = team.locator(f'li.terminal[data-terminal-id="{agent["id"]}"] .waits')
    console.wait(lambda: "1 message pending" in waits.inner_text(), timeout=10, what="the pending count")
    console.wait(lambda: row.get_attribute("data-state") == "delivered", timeout=30, what="shown delivered")
    shown = states(console, message)
    assert shown.index("pending") < shown.index("delivered"), shown
    assert row.locator("td").nth(1).inner_text() == "tester"
    assert row.locator("td").nth(2).inner_text() == f"developer {agent['id']}"
    console.wait(lambda: "pending" not in waits.inner_text(), timeout=10, what="the count gone")
    timeline = console.page.get_by_role("list", name="timeline")
    console.wait(lambda: f"message #{message}" in timeline.inner_text(), timeout=10, what="the timeline")
    team.close()
    with api(console.server) as http:
        http.delete(f"/sessions/{agent['session_name']}")


def test_cancel_stops_a_pending_message_and_retry_sends_it_after_all(console):
    agent = start_session(console.server, session_name="inbox-cancel")
    messages_page(console, agent["session_name"])
    busy(console.server, agent["id"], 5)
    message = send(console.server, agent["id"], "never mind this one")
    row = console.page.locator(f'tr[data-message-id="{message}"]')
    row.get_by_role("button", name="Cancel").click()
    console.wait(lambda: row.get_attribute("data-state") == "dead", timeout=10, what="shown dead")
    assert "cancelled" in row.locator("td.reason").inner_text()
    assert row.get_by_role("button", name="Cancel").count() == 0
    with api(console.server) as http:
        http.get(f"/terminals/{agent['id']}/wait", params={"status": "completed", "timeout": 15})
        assert "never mind this one" not in screen(http, agent["id"])
        # Changed our mind: a cancelled message is dead, and Retry puts it back in line.
        row.get_by_role("button", name="Retry").click()
        console.wait(lambda: row.get_attribute("data-state") == "delivered", timeout=15, what="delivered")
        console.wait(lambda: "> MOCK: never mind this one" in screen(http, agent["id"]),
                     what="typed in and answered")
        http.delete(f"/sessions/{agent['session_name']}")
    assert states(console, message) == ["pending", "dead", "pending", "delivered"]


def test_retry_puts_a_failed_message_back_in_the_queue(console):
    keeper = start_session(console.server, session_name="inbox-retry")
    with api(console.server) as http:
        added = http.post(f"/sessions/{keeper['session_name']}/terminals",
                          json={"agent_profile": "developer", "provider": "mock_cli",
                                "working_directory": str(console.server.workdir)})
        receiver = added.json()["id"]
    messages_page(console, keeper["session_name"])
    busy(console.server, receiver, 30)
    message = send(console.server, receiver, "for an agent about to crash")
    row = console.page.locator(f'tr[data-message-id="{message}"]')
    console.wait(lambda: row.get_attribute("data-state") == "pending", what="shown pending")
    # Its agent dies while the message waits: the message fails for good (dead), with the reason.
    crash(console.server, receiver)
    console.wait(lambda: row.get_attribute("data-state") == "dead", timeout=15, what="shown dead")
    assert "agent exited" in row.locator("td.reason").inner_text()
    with console.page.expect_response(lambda r: r.url.endswith(f"/messages/{message}/retry")) as answer:
        row.get_by_role("button", name="Retry").click()
    assert answer.value.status == 200
    # Back in the queue; its receiver still cannot take it, so it fails again, and the page shows both.
    console.wait(lambda: states(console, message).count("dead") >= 2, timeout=15,
                 what="retried, then dead again")
    shown = states(console, message)
    assert shown[shown.index("dead"):][:3] == ["dead", "pending", "dead"], shown
    with api(console.server) as http:
        http.delete(f"/sessions/{keeper['session_name']}")


def test_markup_and_escape_sequences_in_a_message_are_shown_as_text(console):
    agent = start_session(console.server, session_name="inbox-markup")
    messages_page(console, agent["session_name"])
    busy(console.server, agent["id"], 3)
    body = '<script>alert(1)</script><img src=x onerror="alert(2)"> \x1b[31mred\x1b[0m \x1b]0;title\x07'
    message = send(console.server, agent["id"], body)
    row = console.page.locator(f'tr[data-message-id="{message}"]')
    row.wait_for()
    summary = row.locator("summary")
    assert "<script>alert(1)</script>" in summary.inner_text()
    summary.press("Enter")  # the whole text, on request, from the keyboard
    text = row.locator(".body").inner_text()
    assert "<script>alert(1)</script>" in text and '<img src=x onerror="alert(2)">' in text
    # Escape characters are drawn as their symbols, not obeyed.
    assert "\u241b[31mred\u241b[0m" in text and "\u241b]0;title\u2407" in text
    assert console.page.locator("main script, main img").count() == 0
    timeline = console.page.get_by_role("list", name="timeline")
    console.wait(lambda: "<script>alert(1)</script>" in timeline.inner_text(), what="timeline text")
    console.wait(lambda: row.get_attribute("data-state") == "delivered", timeout=20, what="delivered")
    # The console's own fixture fails the test on any dialog the page opened.
    with api(console.server) as http:
        http.delete(f"/sessions/{agent['session_name']}")


def test_a_plugins_activity_in_the_session_is_on_its_timeline_as_text(console):
    agent = start_session(console.server, session_name="inbox-activity")
    messages_page(console, agent["session_name"])
    with api(console.server) as http:
        for data in ({"run_id": 7, "state": "started", "session_name": agent["session_name"],
                      "summary": "flow daily: started <b>now</b>"},
                     {"run_id": 8, "state": "started", "session_name": "cao-elsewhere", "summary": "not here"},
                     {"run_id": 9, "state": "completed", "session_name": agent["session_name"]}):
            assert http.post("/activity", json={"kind": "flow.run", "data": data}).status_code == 201
    timeline = console.page.get_by_role("list", name="timeline")
    console.wait(lambda: "flow.run completed" in timeline.inner_text(), timeout=10, what="both activities")
    shown = timeline.inner_text()
    assert "flow daily: started <b>now</b>" in shown and "not here" not in shown
    assert console.page.locator("li.event-activity-flow-run").count() == 2
    assert console.page.locator("main b").count() == 0
    with api(console.server) as http:
        http.delete(f"/sessions/{agent['session_name']}")
